defmodule ServerBench.MixProject do
  use Mix.Project

  def project do
    [app: :serverbench, version: "0.1.0", elixir: "~> 1.14", start_permanent: true, deps: []]
  end

  def application do
    [mod: {ServerBench.Application, []}, extra_applications: [:logger, :eex, :odbc]]
  end
end

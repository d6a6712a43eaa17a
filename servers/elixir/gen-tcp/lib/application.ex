defmodule ServerBench.Application do
  @moduledoc "Reads the environment, builds the payload once and starts the listeners."
  use Application

  @payload_size 1_048_576

  @impl true
  def start(_type, _args) do
    ServerBench.Sigterm.install()
    host = env("HOST", "127.0.0.1")
    {:ok, addr} = host |> String.to_charlist() |> :inet.parse_address()
    port = env("PORT", "8080") |> String.to_integer()
    echo_port = env("ECHO_PORT", "9000") |> String.to_integer()
    workers = env("WORKERS", "1") |> String.to_integer() |> max(1)
    :persistent_term.put(:payload, payload())

    children =
      [ServerBench.PingPong | ServerBench.Database.children()] ++
        [
          Supervisor.child_spec(
            {ServerBench.Listener, {:http, addr, port, workers, ServerBench.Http}},
            id: :http
          ),
          Supervisor.child_spec(
            {ServerBench.Listener, {:echo, addr, echo_port, workers, ServerBench.Echo}},
            id: :echo
          )
        ]

    IO.puts("elixir/gen-tcp: http on #{host}:#{port}, echo on #{host}:#{echo_port}, " <>
              "#{System.schedulers_online()} schedulers")
    Supervisor.start_link(children, strategy: :one_for_one, name: ServerBench.Supervisor)
  end

  defp env(name, default) do
    case System.get_env(name) do
      nil -> default
      "" -> default
      value -> value
    end
  end

  defp payload, do: for(i <- 0..(@payload_size - 1), into: <<>>, do: <<?a + rem(i, 26)>>)
end

defmodule ServerBench.Sigterm do
  @moduledoc """
  Halts at once on SIGTERM; the default handler runs an orderly init:stop() that takes seconds
  here, and a benchmark server has no state worth saving.
  """
  @behaviour :gen_event

  def install do
    :ok = :gen_event.swap_handler(:erl_signal_server, {:erl_signal_handler, []}, {__MODULE__, []})
  end

  @impl true
  def init(_), do: {:ok, nil}

  @impl true
  def handle_event(:sigterm, _state), do: System.halt(0)
  def handle_event(_signal, state), do: {:ok, state}

  @impl true
  def handle_call(_request, state), do: {:ok, :ok, state}
end

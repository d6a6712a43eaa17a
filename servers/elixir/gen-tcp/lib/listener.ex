defmodule ServerBench.Listener do
  @moduledoc """
  Owns one listening socket and runs `workers` acceptor processes on it; every accepted
  connection gets its own process running `handler.serve/1`.
  """

  def child_spec(arg) do
    %{id: __MODULE__, start: {__MODULE__, :start_link, [arg]}}
  end

  def start_link({kind, addr, port, workers, handler}) do
    # HTTP: the socket parses request lines and headers, accepting lines up to 64 KiB
    # (`packet_size`; without it a line longer than the small default buffer, such as an 8 KiB
    # Cookie, fails with emsgsize and the connection is dropped unanswered); echo: raw bytes
    # through a 64 KiB user-space buffer (the default is small and costs echo throughput ~10x).
    kind_opts =
      if kind == :http,
        do: [packet: :http_bin, packet_size: 65536],
        else: [packet: :raw, buffer: 65536]
    family = if tuple_size(addr) == 8, do: :inet6, else: :inet

    opts =
      [family, :binary, ip: addr, active: false, reuseaddr: true, backlog: 1024, nodelay: true] ++
        kind_opts

    {:ok, listen} = :gen_tcp.listen(port, opts)
    pid = spawn_link(fn -> own(listen, workers, handler) end)
    :ok = :gen_tcp.controlling_process(listen, pid)
    {:ok, pid}
  end

  defp own(listen, workers, handler) do
    for _ <- 1..workers, do: spawn_link(fn -> accept(listen, handler) end)
    Process.sleep(:infinity)
  end

  defp accept(listen, handler) do
    case :gen_tcp.accept(listen) do
      {:ok, sock} ->
        pid = spawn(fn -> receive(do: (:go -> handler.serve(sock))) end)
        :ok = :gen_tcp.controlling_process(sock, pid)
        send(pid, :go)

      {:error, reason} ->
        IO.puts("accept failed: #{inspect(reason)}")
    end

    accept(listen, handler)
  end
end

defmodule ServerBench.Echo do
  @moduledoc "TCP echo: every byte read is written back until the peer closes."

  def serve(sock) do
    with {:ok, data} <- :gen_tcp.recv(sock, 0),
         :ok <- :gen_tcp.send(sock, data) do
      serve(sock)
    else
      _ -> :gen_tcp.close(sock)
    end
  end
end

defmodule ServerBench.PingPong do
  @moduledoc """
  The /pingpong worker: handlers send it a message (GenServer.call) and it replies with the
  1 MiB payload. The binary is reference-counted, so the reply carries a pointer, not a copy.
  """
  use GenServer

  def start_link(_), do: GenServer.start_link(__MODULE__, nil, name: __MODULE__)
  def ping, do: GenServer.call(__MODULE__, :ping)

  @impl true
  def init(nil), do: {:ok, :persistent_term.get(:payload)}

  @impl true
  def handle_call(:ping, _from, payload), do: {:reply, payload, payload}
end

defmodule ServerBench.Database.Pool do
  @moduledoc """
  DATABASE_POOL ODBC connections. `:odbc` lets only the process that opened a connection use it,
  so each connection lives in a worker process; a request checks one out, runs its queries there
  and checks it back in; callers queue while every worker is busy. A worker that dies is
  replaced; a lost connection is reopened on the worker's next request.
  """
  use GenServer

  def start_link({conn_str, size}),
    do: GenServer.start_link(__MODULE__, {conn_str, size}, name: __MODULE__)

  @doc "Runs fun.(ref) in a pooled connection's process: its result, or {:error, reason}."
  def with_connection(fun) do
    worker = GenServer.call(__MODULE__, :checkout, :infinity)
    tag = Process.monitor(worker)
    send(worker, {:run, self(), tag, fun})

    receive do
      {^tag, result} ->
        Process.demonitor(tag, [:flush])
        GenServer.cast(__MODULE__, {:checkin, worker})
        result

      {:DOWN, ^tag, :process, ^worker, reason} ->
        {:error, {:connection_process, reason}}
    end
  end

  @impl true
  def init({conn_str, size}) do
    Process.flag(:trap_exit, true)
    workers = for _ <- 1..size, do: spawn_link(fn -> worker(conn_str) end)
    # holders: a checked-out worker => the monitor of its holder (a holder that dies gives it back)
    {:ok, %{conn_str: conn_str, idle: workers, waiting: :queue.new(), holders: %{}}}
  end

  @impl true
  def handle_call(:checkout, {caller, _}, %{idle: [worker | rest]} = pool),
    do: {:reply, worker, hold(worker, caller, %{pool | idle: rest})}

  def handle_call(:checkout, from, %{idle: []} = pool),
    do: {:noreply, %{pool | waiting: :queue.in(from, pool.waiting)}}

  @impl true
  def handle_cast({:checkin, worker}, pool), do: {:noreply, give(worker, release(worker, pool))}

  @impl true
  def handle_info({:DOWN, mon, :process, _, _}, pool) do
    case Enum.find(pool.holders, fn {_, m} -> m == mon end) do
      {worker, _} -> {:noreply, give(worker, %{pool | holders: Map.delete(pool.holders, worker)})}
      nil -> {:noreply, pool}
    end
  end

  def handle_info({:EXIT, worker, reason}, pool) do
    IO.puts("elixir/gen-tcp: database connection process ended: #{inspect(reason)}")
    conn_str = pool.conn_str
    new = spawn_link(fn -> worker(conn_str) end)
    {:noreply, give(new, release(worker, %{pool | idle: List.delete(pool.idle, worker)}))}
  end

  defp hold(worker, caller, pool),
    do: %{pool | holders: Map.put(pool.holders, worker, Process.monitor(caller))}

  defp release(worker, pool) do
    case Map.pop(pool.holders, worker) do
      {nil, _} ->
        pool

      {mon, rest} ->
        Process.demonitor(mon, [:flush])
        %{pool | holders: rest}
    end
  end

  defp give(worker, pool) do
    case :queue.out(pool.waiting) do
      {{:value, {caller, _} = from}, rest} ->
        if Process.alive?(caller) do
          GenServer.reply(from, worker)
          hold(worker, caller, %{pool | waiting: rest})
        else
          give(worker, %{pool | waiting: rest})
        end

      {:empty, _} ->
        %{pool | idle: [worker | pool.idle]}
    end
  end

  # ---- a worker: one ODBC connection (its own odbcserver port program and psqlODBC handle) ----

  defp worker(conn_str), do: loop(conn_str, connect(conn_str))

  defp connect(conn_str) do
    options = [auto_commit: :on, scrollable_cursors: :off, binary_strings: :on, tuple_row: :on]

    case :odbc.connect(String.to_charlist(conn_str), options) do
      {:ok, ref} ->
        ref

      {:error, reason} ->
        IO.puts("elixir/gen-tcp: database connection failed: #{inspect(reason)}")
        nil
    end
  end

  defp loop(conn_str, ref) do
    receive do
      {:run, caller, tag, fun} ->
        ref = ref || connect(conn_str)
        result = if ref, do: run(fun, ref), else: {:error, :no_connection}
        send(caller, {tag, result})
        loop(conn_str, healthy(ref, result))
    end
  end

  defp run(fun, ref) do
    fun.(ref)
  catch
    :throw, {_, {:error, reason}} -> {:error, reason}
    kind, reason -> {:error, {kind, reason}}
  end

  defp healthy(nil, _), do: nil

  defp healthy(ref, {:error, :connection_closed}) do
    :odbc.disconnect(ref)
    nil
  end

  defp healthy(ref, _), do: ref
end

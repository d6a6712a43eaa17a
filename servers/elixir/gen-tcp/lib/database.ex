defmodule ServerBench.Database do
  @moduledoc """
  The contract's database workloads (db, queries, fortunes, updates) on OTP's `:odbc` with
  PostgreSQL's ODBC driver (psqlODBC through unixODBC): postgrex needs hex, which is
  unreachable, and Debian packages no Elixir or Erlang PostgreSQL client. Every statement is
  parameterised (`?` markers, `:odbc.param_query/3`, auto-commit).
  """
  alias ServerBench.Database.Pool
  require EEx

  @world_rows 10_000
  @select_world ~c"SELECT id, randomnumber FROM world WHERE id = ?"
  @update_world ~c"UPDATE world SET randomnumber = ? WHERE id = ?"
  @select_fortunes ~c"SELECT id, message FROM fortune"
  @additional "Additional fortune added at request time."

  @doc "The pool's child spec when DATABASE_URL is set (the routes exist only then), else none."
  def children do
    case System.get_env("DATABASE_URL") do
      url when url in [nil, ""] ->
        :persistent_term.put({__MODULE__, :enabled}, false)
        []

      url ->
        :persistent_term.put({__MODULE__, :enabled}, true)
        size = env("DATABASE_POOL", "16") |> String.to_integer() |> max(1)
        [{Pool, {conn_str(url), size}}]
    end
  end

  def enabled?, do: :persistent_term.get({__MODULE__, :enabled}, false)

  @doc "The ODBC connection string from DATABASE_HOST, _PORT, _USER, _PASSWORD, _NAME or the URL."
  def conn_str(url) do
    uri = URI.parse(url)
    [user, password] = String.split(uri.userinfo || ":", ":", parts: 2)

    "Driver={PostgreSQL ANSI};Server=#{env("DATABASE_HOST", uri.host)}" <>
      ";Port=#{env("DATABASE_PORT", to_string(uri.port || 5432))}" <>
      ";Database=#{env("DATABASE_NAME", String.trim_leading(uri.path || "", "/"))}" <>
      ";Uid=#{env("DATABASE_USER", URI.decode(user))}" <>
      ";Pwd=#{env("DATABASE_PASSWORD", URI.decode(password))};UseServerSidePrepare=1;"
  end

  defp env(name, default) do
    case System.get_env(name) do
      v when v in [nil, ""] -> default
      v -> v
    end
  end

  @doc "The queries parameter: missing, empty or not a number means 1; clamped to 1..500."
  def query_count(raw) when is_binary(raw) do
    case Integer.parse(raw) do
      {n, ""} -> n |> max(1) |> min(500)
      _ -> 1
    end
  end

  def query_count(_), do: 1

  def world, do: run(&read/1)

  def worlds(n), do: run(fn ref -> for _ <- 1..n, do: read(ref) end)

  @doc """
  Reads n rows, one SELECT each, gives each distinct id a new number and writes it with its own
  UPDATE in id order (auto-commit: no deadlock between requests); returns the rows as written.
  """
  def update_worlds(n) do
    run(fn ref ->
      read = for _ <- 1..n, do: read(ref)
      new = Map.new(read, fn {id, _} -> {id, random_id()} end)
      for {id, number} <- Enum.sort(new), do: write(ref, id, number)
      for {id, _} <- read, do: {id, Map.fetch!(new, id)}
    end)
  end

  @doc "Every fortune plus the added one, sorted by message (UTF-8 byte order = code points)."
  def fortunes do
    run(fn ref ->
      {:selected, _, rows} = :odbc.param_query(ref, @select_fortunes, [])
      List.keysort([{0, @additional} | rows], 1)
    end)
  end

  defp random_id, do: :rand.uniform(@world_rows)

  defp read(ref) do
    case :odbc.param_query(ref, @select_world, [{:sql_integer, [random_id()]}]) do
      {:selected, _, [{id, number}]} -> {id, number}
      other -> throw({:select_world, other})
    end
  end

  defp write(ref, id, number) do
    case :odbc.param_query(ref, @update_world, [{:sql_integer, [number]}, {:sql_integer, [id]}]) do
      {:updated, _} -> :ok
      other -> throw({:update_world, other})
    end
  end

  # {:ok, result} or {:error, reason}: the caller answers 500 on the latter.
  defp run(fun), do: Pool.with_connection(fn ref -> {:ok, fun.(ref)} end)

  @doc "The fortunes page: EEx (Elixir's template engine) with every message HTML-escaped."
  EEx.function_from_string(
    :def,
    :render_fortunes,
    ~s"""
    <!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
    <tr><th>id</th><th>message</th></tr>\
    <%= for {id, message} <- rows do %>\
    <tr><td><%= id %></td><td><%= ServerBench.Database.escape_html(message) %></td></tr>\
    <% end %>\
    </table></body></html>\
    """,
    [:rows]
  )

  def escape_html(bin) do
    for <<c <- bin>>, into: "" do
      case c do
        ?& -> "&amp;"
        ?< -> "&lt;"
        ?> -> "&gt;"
        ?" -> "&quot;"
        ?' -> "&#39;"
        c -> <<c>>
      end
    end
  end
end

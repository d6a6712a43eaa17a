defmodule ServerBench.Http do
  @moduledoc """
  HTTP/1.1 over gen_tcp. The socket's built-in `packet: :http_bin` decoder parses the request
  line and headers and keeps pipelined bytes buffered, so pipelined requests are answered in
  order; keep-alive unless HTTP/1.0 without `Connection: keep-alive` or `Connection: close`.
  """

  def serve(sock) do
    case :gen_tcp.recv(sock, 0) do
      {:ok, {:http_request, _method, {:abs_path, target}, version}} ->
        {path, query} =
          case String.split(target, "?", parts: 2) do
            [path, query] -> {path, query}
            [path] -> {path, ""}
          end

        request(sock, path, query, version)

      {:ok, {:http_request, _method, _uri, version}} ->
        request(sock, "", "", version)

      {:ok, {:http_error, _}} ->
        bad_request(sock)

      {:error, _} ->
        :gen_tcp.close(sock)
    end
  end

  defp request(sock, path, query, version) do
    case headers(sock, version == {1, 1}, 0) do
      {:ok, keep_alive, body_len} ->
        {status, type, body} = route(path, query)

        with :ok <- skip_body(sock, body_len),
             :ok <- respond(sock, status, type, body, keep_alive),
             true <- keep_alive do
          serve(sock)
        else
          _ -> :gen_tcp.close(sock)
        end

      :error ->
        bad_request(sock)
    end
  end

  defp headers(sock, keep_alive, body_len) do
    case :gen_tcp.recv(sock, 0) do
      {:ok, {:http_header, _, :Connection, _, value}} ->
        headers(sock, connection(String.downcase(value), keep_alive), body_len)

      {:ok, {:http_header, _, :"Content-Length", _, value}} ->
        case Integer.parse(value) do
          {n, ""} when n >= 0 -> headers(sock, keep_alive, n)
          _ -> :error
        end

      {:ok, {:http_header, _, _, _, _}} ->
        headers(sock, keep_alive, body_len)

      {:ok, :http_eoh} ->
        {:ok, keep_alive, body_len}

      _ ->
        :error
    end
  end

  defp connection(value, default) do
    tokens = value |> String.split(",") |> Enum.map(&String.trim/1)

    cond do
      "close" in tokens -> false
      "keep-alive" in tokens -> true
      true -> default
    end
  end

  defp skip_body(_sock, 0), do: :ok

  defp skip_body(sock, len) do
    :ok = :inet.setopts(sock, packet: :raw)

    with {:ok, _} <- :gen_tcp.recv(sock, len) do
      :inet.setopts(sock, packet: :http_bin)
    end
  end

  defp route(path, query) do
    if ServerBench.Database.enabled?(), do: database(path, query), else: route(path)
  end

  # /db, /queries, /fortunes, /updates (only when DATABASE_URL is set); a database error is a 500.
  alias ServerBench.Database, as: Db
  defp database("/db", _), do: json(Db.world(), &world_json/1)
  defp database("/queries", query), do: json(Db.worlds(queries(query)), &worlds_json/1)
  defp database("/updates", query), do: json(Db.update_worlds(queries(query)), &worlds_json/1)

  defp database("/fortunes", _) do
    case Db.fortunes() do
      {:ok, rows} -> {200, "text/html; charset=utf-8", Db.render_fortunes(rows)}
      {:error, reason} -> db_error(reason)
    end
  end

  defp database(path, _), do: route(path)

  defp queries(query) do
    query |> URI.decode_query() |> Map.get("queries") |> Db.query_count()
  rescue
    ArgumentError -> 1
  end

  defp json({:ok, value}, encode), do: {200, "application/json", encode.(value)}
  defp json({:error, reason}, _), do: db_error(reason)

  defp db_error(reason) do
    IO.puts("elixir/gen-tcp: database: #{inspect(reason)}")
    {500, "text/plain", "Internal Server Error"}
  end

  defp world_json({id, number}), do: ~s({"id":#{id},"randomNumber":#{number}})
  defp worlds_json(worlds), do: "[" <> Enum.map_join(worlds, ",", &world_json/1) <> "]"

  defp route("/hello"), do: {200, "text/plain", "Hello World!"}
  defp route("/hey"), do: {200, "text/plain", "Hey!"}
  defp route("/hell"), do: {200, "text/plain", "Hell!"}
  defp route("/about"), do: {200, "text/html", "<html><body>About page</body></html>"}
  defp route("/json"), do: {200, "application/json", json_message("Hello, World!")}
  defp route("/payload"), do: {200, "application/octet-stream", :persistent_term.get(:payload)}
  defp route("/pingpong"), do: {200, "application/octet-stream", ServerBench.PingPong.ping()}
  defp route(_), do: {404, "text/plain", "Not Found"}

  # Elixir 1.14 has no JSON module and Jason needs hex: serialize the one-field object here.
  defp json_message(message), do: ~s({"message":"#{json_escape(message)}"})

  defp json_escape(s) do
    for <<c <- s>>, into: "" do
      case c do
        ?" -> "\\\""
        ?\\ -> "\\\\"
        c when c < 0x20 -> "\\u" <> String.pad_leading(Integer.to_string(c, 16), 4, "0")
        c -> <<c>>
      end
    end
  end

  defp respond(sock, status, type, body, keep_alive) do
    conn = if keep_alive, do: "keep-alive", else: "close"

    :gen_tcp.send(sock, [
      "HTTP/1.1 ", status_line(status), "\r\nServer: elixir-gen-tcp\r\nContent-Type: ", type,
      "\r\nContent-Length: ", Integer.to_string(byte_size(body)),
      "\r\nConnection: ", conn, "\r\n\r\n", body
    ])
  end

  defp status_line(200), do: "200 OK"
  defp status_line(400), do: "400 Bad Request"
  defp status_line(404), do: "404 Not Found"
  defp status_line(500), do: "500 Internal Server Error"

  defp bad_request(sock) do
    respond(sock, 400, "text/plain", "Bad Request", false)
    :gen_tcp.close(sock)
  end
end

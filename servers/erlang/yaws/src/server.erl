%% serverbench erlang/yaws: the contract's ws-echo on Yaws's WebSocket support (Debian
%% erlang-yaws 2.1.1), with hello, routes and json on the same embedded Yaws server.
-module(server).
-export([main/0, start/0, out/1]).

-include_lib("yaws_api.hrl").

%% The largest frame and message: the contract asks for 64 KiB, 1 MiB leaves room (Yaws's
%% defaults are 16 MiB).
-define(MAX_MESSAGE, 1048576).

%% Called from `erl -eval`: Yaws runs under its own application supervisor; SIGTERM halts the
%% VM (see sigterm_handler).
main() ->
    sigterm_handler:install(),
    case catch start() of
        ok -> ok;
        Error ->
            io:format("erlang/yaws: start-up failed: ~p~n", [Error]),
            halt(1)
    end.

start() ->
    Host = env("HOST", "127.0.0.1"),
    Port = list_to_integer(env("PORT", "8080")),
    Workers = max(1, list_to_integer(env("WORKERS", "1"))),
    {ok, Addr} = inet:parse_address(Host),
    %% Yaws wants a log folder even with access logs off (its report.log); one per port.
    LogDir = filename:join(env("TMPDIR", "/tmp"), "serverbench-erlang-yaws-" ++ integer_to_list(Port)),
    ok = filelib:ensure_dir(filename:join(LogDir, "x")),
    %% One appmod on "/" takes every request: out/1 routes on the path. Access logs off.
    ServerConf = [{servername, "serverbench"}, {listen, Addr}, {port, Port},
                  {appmods, [{"/", ?MODULE}]}, {access_log, false},
                  {acceptor_pool_size, 8 * Workers}],
    GlobalConf = [{logdir, LogDir}, {id, "serverbench"}, {keepalive_timeout, infinity},
                  {max_connections, nolimit}],
    ok = yaws:start_embedded(LogDir, ServerConf, GlobalConf, "serverbench"),
    io:format("erlang/yaws: http and /ws on ~s:~b, ~b schedulers~n",
              [Host, Port, erlang:system_info(schedulers_online)]),
    ok.

env(Name, Default) ->
    case os:getenv(Name) of
        false -> Default;
        "" -> Default;
        Value -> Value
    end.

%% ---- the appmod: Yaws calls out/1 once per request, in the connection's process ----------

out(Arg) ->
    case Arg#arg.server_path of
        "/ws" -> websocket(Arg);
        Path -> route(Path) ++ keep_alive_10(Arg)
    end.

route("/hello") -> text(200, "text/plain", <<"Hello World!">>);
route("/hey") -> text(200, "text/plain", <<"Hey!">>);
route("/hell") -> text(200, "text/plain", <<"Hell!">>);
route("/about") -> text(200, "text/html", <<"<html><body>About page</body></html>">>);
route("/json") ->
    text(200, "application/json",
         iolist_to_binary(json2:encode({struct, [{"message", "Hello, World!"}]})));
route(_) -> text(404, "text/plain", <<"Not Found">>).

%% Yaws closes every HTTP/1.0 connection on its own; a `{connection, ...}` header other than
%% "close" clears its close flag, so an HTTP/1.0 request that asks for keep-alive keeps it.
keep_alive_10(Arg) ->
    Headers = Arg#arg.headers,
    case {(Arg#arg.req)#http_request.version,
          string:lowercase(value(Headers#headers.connection))} of
        {{1, 0}, "keep-alive"} -> [{header, {connection, "keep-alive"}}];
        _ -> []
    end.

text(Status, Type, Body) ->
    [{status, Status}, {content, Type, Body}].

%% GET /ws: hands the connection to Yaws's WebSocket process with ws_echo as the callback
%% (basic: whole messages, fragments reassembled by Yaws), or 426 without the upgrade headers.
websocket(Arg) ->
    case upgrade_requested(Arg#arg.headers) of
        true ->
            {websocket, ws_echo, [{callback, basic},
                                  {max_frame_size, ?MAX_MESSAGE},
                                  {max_message_size, ?MAX_MESSAGE},
                                  {close_if_unmasked, true}]};
        false ->
            [{status, 426}, {header, {"Upgrade", "websocket"}},
             {header, {"Sec-WebSocket-Version", "13"}},
             {content, "text/plain", <<"Upgrade Required">>}]
    end.

upgrade_requested(Headers) ->
    Connection = string:lowercase(value(Headers#headers.connection)),
    Upgrade = string:lowercase(value(yaws_api:get_header(Headers, "Upgrade"))),
    lists:member("upgrade", [string:trim(T) || T <- string:split(Connection, ",", all)])
        andalso Upgrade =:= "websocket".

value(undefined) -> "";
value(V) -> V.

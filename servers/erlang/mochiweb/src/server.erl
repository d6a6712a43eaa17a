%% serverbench erlang/mochiweb: the HTTP contract on MochiWeb (Debian erlang-mochiweb 3.1.1),
%% and the TCP echo on plain gen_tcp in the same node (MochiWeb serves HTTP only).
-module(server).
-export([main/0, start/0, loop/1, echo_acceptor/1, echo_conn/1, pingpong_worker/0]).

-define(PAYLOAD_SIZE, 1048576).

%% Called from `erl -eval`: the servers get their own long-lived owner process so that the
%% init process stays free; SIGTERM halts the VM (see sigterm_handler).
main() ->
    sigterm_handler:install(),
    Parent = self(),
    {_, Ref} = spawn_monitor(fun() -> start(), Parent ! started, receive stop -> ok end end),
    receive
        started -> ok;
        {'DOWN', Ref, process, _, Reason} ->
            io:format("erlang/mochiweb: start-up failed: ~p~n", [Reason]),
            halt(1)
    end.

start() ->
    Host = env("HOST", "127.0.0.1"),
    Port = list_to_integer(env("PORT", "8080")),
    EchoPort = list_to_integer(env("ECHO_PORT", "9000")),
    Workers = max(1, list_to_integer(env("WORKERS", "1"))),
    {ok, Addr} = inet:parse_address(Host),
    persistent_term:put(payload, payload()),
    register(pingpong, spawn_link(fun pingpong_worker/0)),
    %% {buffer, 65536}: MochiWeb's request line and header lines must fit the socket's
    %% user-space buffer (1460 bytes by default, an 8 KiB Cookie would get 400).
    {ok, _} = mochiweb_http:start_link([{name, ?MODULE}, {ip, Addr}, {port, Port},
                                        {loop, fun ?MODULE:loop/1}, {nodelay, true},
                                        {backlog, 1024}, {buffer, 65536}]),
    Family = case tuple_size(Addr) of 4 -> inet; 8 -> inet6 end,
    {ok, EchoL} = gen_tcp:listen(EchoPort, [Family, {ip, Addr}, binary, {active, false},
                                            {reuseaddr, true}, {backlog, 1024}, {nodelay, true},
                                            {packet, raw}, {buffer, 65536}]),
    [spawn_link(?MODULE, echo_acceptor, [EchoL]) || _ <- lists:seq(1, Workers)],
    io:format("erlang/mochiweb: http on ~s:~b, echo on ~s:~b, ~b schedulers~n",
              [Host, Port, Host, EchoPort, erlang:system_info(schedulers_online)]).

env(Name, Default) ->
    case os:getenv(Name) of
        false -> Default;
        "" -> Default;
        Value -> Value
    end.

payload() ->
    << <<($a + I rem 26)>> || I <- lists:seq(0, ?PAYLOAD_SIZE - 1) >>.

%% ---- HTTP (MochiWeb calls loop/1 once per request, in the connection's process) ------------

loop(Req) ->
    %% baseline, upload, compression (shapes.erl) first.
    case shapes:handle(Req) of
        {ShapeStatus, ShapeHeaders, ShapeBody} ->
            mochiweb_request:respond({ShapeStatus, ShapeHeaders ++ keep_alive_10(Req), ShapeBody}, Req);
        nomatch ->
            {Status, Type, Body} = route(mochiweb_request:get(path, Req)),
            Headers = [{"Content-Type", Type} | keep_alive_10(Req)],
            mochiweb_request:respond({Status, Headers, Body}, Req)
    end.

route("/hello") -> {200, "text/plain", <<"Hello World!">>};
route("/hey") -> {200, "text/plain", <<"Hey!">>};
route("/hell") -> {200, "text/plain", <<"Hell!">>};
route("/about") -> {200, "text/html", <<"<html><body>About page</body></html>">>};
route("/json") ->
    {200, "application/json",
     iolist_to_binary(mochijson2:encode({struct, [{<<"message">>, <<"Hello, World!">>}]}))};
route("/payload") -> {200, "application/octet-stream", persistent_term:get(payload)};
route("/pingpong") -> {200, "application/octet-stream", pingpong()};
route(_) -> {404, "text/plain", <<"Not Found">>}.

%% MochiWeb keeps an HTTP/1.0 connection open when the request says exactly
%% `Connection: Keep-Alive` (as ab -k sends it) but does not say so in the answer, and an
%% HTTP/1.0 client closes unless it does.
keep_alive_10(Req) ->
    case {mochiweb_request:get(version, Req),
          mochiweb_request:get_header_value("connection", Req)} of
        {{1, 0}, "Keep-Alive"} -> [{"Connection", "keep-alive"}];
        _ -> []
    end.

%% ---- pingpong ------------------------------------------------------------------------------

%% The worker owns nothing but the payload; the 1 MiB binary is reference-counted, so the
%% reply message carries a pointer, not a copy.
pingpong_worker() ->
    Payload = persistent_term:get(payload),
    pingpong_loop(Payload).

pingpong_loop(Payload) ->
    receive
        {ping, From, Ref} -> From ! {pong, Ref, Payload}
    end,
    pingpong_loop(Payload).

pingpong() ->
    Ref = make_ref(),
    pingpong ! {ping, self(), Ref},
    receive {pong, Ref, Body} -> Body end.

%% ---- echo (gen_tcp, one process per connection) --------------------------------------------

echo_acceptor(Listen) ->
    case gen_tcp:accept(Listen) of
        {ok, Sock} ->
            Pid = spawn(?MODULE, echo_conn, [Sock]),
            ok = gen_tcp:controlling_process(Sock, Pid),
            Pid ! go;
        {error, Reason} ->
            io:format("accept failed: ~p~n", [Reason])
    end,
    echo_acceptor(Listen).

echo_conn(Sock) ->
    receive go -> ok end,
    echo_loop(Sock).

echo_loop(Sock) ->
    case gen_tcp:recv(Sock, 0) of
        {ok, Data} ->
            case gen_tcp:send(Sock, Data) of
                ok -> echo_loop(Sock);
                {error, _} -> gen_tcp:close(Sock)
            end;
        {error, _} ->
            gen_tcp:close(Sock)
    end.

%% serverbench erlang/inets: the HTTP contract on OTP's own HTTP server (inets httpd) with one
%% request-handling module (serverbench_httpd), and the TCP echo on plain gen_tcp in the same
%% node (httpd serves HTTP only).
-module(server).
-export([main/0, start/0, pingpong/0, echo_acceptor/1, echo_conn/1, pingpong_worker/0]).

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
            io:format("erlang/inets: start-up failed: ~p~n", [Reason]),
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
    ok = db:start(),
    ok = inets:start(),
    {ok, Cwd} = file:get_cwd(),
    {ok, _} = inets:start(httpd, [{port, Port}, {bind_address, Addr},
                                  {server_name, "serverbench"}, {server_root, Cwd},
                                  {document_root, Cwd}, {modules, [serverbench_httpd]},
                                  %% Defaults that would refuse the contract's load: 150
                                  %% simultaneous requests (503 beyond), 10 KiB heads.
                                  %% Keep-alive is on by default, without a request limit.
                                  {max_clients, 100000}, {max_header_size, 65536}]),
    Family = case tuple_size(Addr) of 4 -> inet; 8 -> inet6 end,
    {ok, EchoL} = gen_tcp:listen(EchoPort, [Family, {ip, Addr}, binary, {active, false},
                                            {reuseaddr, true}, {backlog, 1024}, {nodelay, true},
                                            {packet, raw}, {buffer, 65536}]),
    [spawn_link(?MODULE, echo_acceptor, [EchoL]) || _ <- lists:seq(1, Workers)],
    io:format("erlang/inets: http on ~s:~b, echo on ~s:~b, ~b schedulers~n",
              [Host, Port, Host, EchoPort, erlang:system_info(schedulers_online)]).

env(Name, Default) ->
    case os:getenv(Name) of
        false -> Default;
        "" -> Default;
        Value -> Value
    end.

payload() ->
    << <<($a + I rem 26)>> || I <- lists:seq(0, ?PAYLOAD_SIZE - 1) >>.

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

%% Called by serverbench_httpd in the request's process.
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

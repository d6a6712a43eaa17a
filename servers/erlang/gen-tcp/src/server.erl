%% serverbench erlang/gen-tcp: HTTP/1.1 and TCP echo on plain gen_tcp, one process per connection.
%% Requests are parsed by the socket's built-in `{packet, http_bin}` decoder, which keeps any
%% pipelined bytes in the port's buffer, so pipelined requests are read and answered in order.
-module(server).
-export([main/0, start/0, acceptor/2, http_conn/1, echo_conn/1, pingpong_worker/0]).

-define(PAYLOAD_SIZE, 1048576).
-define(MAX_LINE, 65536).
-define(LISTEN_OPTS, [binary, {active, false}, {reuseaddr, true}, {backlog, 1024},
                      {nodelay, true}]).

%% Called from `erl -eval`: the listeners get their own long-lived owner process so that the
%% init process stays free; SIGTERM halts the VM (see sigterm_handler).
main() ->
    sigterm_handler:install(),
    Parent = self(),
    {_, Ref} = spawn_monitor(fun() -> start(), Parent ! started, receive stop -> ok end end),
    receive
        started -> ok;
        {'DOWN', Ref, process, _, Reason} ->
            io:format("erlang/gen-tcp: start-up failed: ~p~n", [Reason]),
            halt(1)
    end.

start() ->
    Host = env("HOST", "127.0.0.1"),
    Port = list_to_integer(env("PORT", "8080")),
    EchoPort = list_to_integer(env("ECHO_PORT", "9000")),
    Workers = max(1, list_to_integer(env("WORKERS", "1"))),
    {ok, Addr} = inet:parse_address(Host),
    Family = case tuple_size(Addr) of 4 -> inet; 8 -> inet6 end,
    persistent_term:put(payload, payload()),
    register(pingpong, spawn_link(fun pingpong_worker/0)),
    ok = db:start(),
    Opts = [Family, {ip, Addr} | ?LISTEN_OPTS],
    %% packet_size: header lines up to 64 KiB are accepted; without it a line longer than the
    %% socket's small default buffer (an 8 KiB Cookie) fails with emsgsize and the connection
    %% is dropped unanswered.
    {ok, HttpL} = gen_tcp:listen(Port, [{packet, http_bin}, {packet_size, ?MAX_LINE} | Opts]),
    %% A 64 KiB user-space buffer for echo: the small default costs ~10x in throughput.
    {ok, EchoL} = gen_tcp:listen(EchoPort, [{packet, raw}, {buffer, 65536} | Opts]),
    %% One acceptor per scheduler for each listener; every connection gets its own process.
    [spawn_link(?MODULE, acceptor, [HttpL, http_conn]) || _ <- lists:seq(1, Workers)],
    [spawn_link(?MODULE, acceptor, [EchoL, echo_conn]) || _ <- lists:seq(1, Workers)],
    io:format("erlang/gen-tcp: http on ~s:~b, echo on ~s:~b, ~b schedulers~n",
              [Host, Port, Host, EchoPort, erlang:system_info(schedulers_online)]).

env(Name, Default) ->
    case os:getenv(Name) of
        false -> Default;
        "" -> Default;
        Value -> Value
    end.

payload() ->
    << <<($a + I rem 26)>> || I <- lists:seq(0, ?PAYLOAD_SIZE - 1) >>.

acceptor(Listen, Handler) ->
    case gen_tcp:accept(Listen) of
        {ok, Sock} ->
            Pid = spawn(?MODULE, Handler, [Sock]),
            ok = gen_tcp:controlling_process(Sock, Pid),
            Pid ! go;
        {error, Reason} ->
            io:format("accept failed: ~p~n", [Reason])
    end,
    acceptor(Listen, Handler).

%% ---- echo ----------------------------------------------------------------------------------

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

%% ---- HTTP ----------------------------------------------------------------------------------

http_conn(Sock) ->
    receive go -> ok end,
    http_loop(Sock).

http_loop(Sock) ->
    case gen_tcp:recv(Sock, 0) of
        {ok, {http_request, _Method, {abs_path, Target}, Version}} ->
            request(Sock, split(Target), Version);
        {ok, {http_request, _Method, _Other, Version}} ->
            request(Sock, {<<>>, <<>>}, Version);
        {ok, {http_error, _}} ->
            bad_request(Sock);
        {error, _} ->
            gen_tcp:close(Sock)
    end.

split(Target) ->
    case binary:split(Target, <<"?">>) of
        [Path] -> {Path, <<>>};
        [Path, Query] -> {Path, Query}
    end.

request(Sock, {Path, Query}, Version) ->
    case headers(Sock, Version =:= {1, 1}, 0) of
        {ok, KeepAlive, BodyLen} ->
            {Status, Type, Body} = route(Path, Query),
            case skip_body(Sock, BodyLen) =:= ok andalso
                 send(Sock, Status, Type, Body, KeepAlive) =:= ok of
                true when KeepAlive -> http_loop(Sock);
                _ -> gen_tcp:close(Sock)
            end;
        error ->
            bad_request(Sock)
    end.

%% Reads header lines up to the blank line; returns keep-alive and the body length.
headers(Sock, KeepAlive, BodyLen) ->
    case gen_tcp:recv(Sock, 0) of
        {ok, {http_header, _, 'Connection', _, Value}} ->
            headers(Sock, connection(string:lowercase(Value), KeepAlive), BodyLen);
        {ok, {http_header, _, 'Content-Length', _, Value}} ->
            case string:to_integer(Value) of
                {N, <<>>} when N >= 0 -> headers(Sock, KeepAlive, N);
                _ -> error
            end;
        {ok, {http_header, _, _, _, _}} -> headers(Sock, KeepAlive, BodyLen);
        {ok, http_eoh} -> {ok, KeepAlive, BodyLen};
        _ -> error
    end.

connection(Value, Default) ->
    Tokens = [string:trim(T) || T <- binary:split(Value, <<",">>, [global])],
    case {lists:member(<<"close">>, Tokens), lists:member(<<"keep-alive">>, Tokens)} of
        {true, _} -> false;
        {_, true} -> true;
        _ -> Default
    end.

skip_body(_Sock, 0) -> ok;
skip_body(Sock, Len) ->
    ok = inet:setopts(Sock, [{packet, raw}]),
    case gen_tcp:recv(Sock, Len) of
        {ok, _} -> inet:setopts(Sock, [{packet, http_bin}]);
        Error -> Error
    end.

route(Path, Query) ->
    case db:enabled() of
        true -> database(Path, Query);
        false -> route(Path)
    end.

%% /db, /queries, /fortunes, /updates (only when DATABASE_URL is set); a database error
%% answers 500.
database(<<"/db">>, _) -> json(db:world(), fun world_json/1);
database(<<"/queries">>, Query) -> json(db:worlds(queries(Query)), fun worlds_json/1);
database(<<"/updates">>, Query) -> json(db:update_worlds(queries(Query)), fun worlds_json/1);
database(<<"/fortunes">>, _) ->
    case db:fortunes() of
        {ok, Rows} -> {200, <<"text/html; charset=utf-8">>, db:render_fortunes(Rows)};
        {error, Reason} -> db_error(Reason)
    end;
database(Path, _) -> route(Path).

queries(Query) ->
    case uri_string:dissect_query(Query) of
        Pairs when is_list(Pairs) -> db:query_count(proplists:get_value(<<"queries">>, Pairs));
        _ -> 1
    end.

json({ok, Value}, Encode) -> {200, <<"application/json">>, Encode(Value)};
json({error, Reason}, _) -> db_error(Reason).

db_error(Reason) ->
    io:format("erlang/gen-tcp: database: ~p~n", [Reason]),
    {500, <<"text/plain">>, <<"Internal Server Error">>}.

world_json({Id, Number}) ->
    [<<"{\"id\":">>, integer_to_binary(Id), <<",\"randomNumber\":">>, integer_to_binary(Number),
     <<"}">>].

worlds_json(Worlds) ->
    [$[, lists:join($,, [world_json(W) || W <- Worlds]), $]].

route(<<"/hello">>) -> {200, <<"text/plain">>, <<"Hello World!">>};
route(<<"/hey">>) -> {200, <<"text/plain">>, <<"Hey!">>};
route(<<"/hell">>) -> {200, <<"text/plain">>, <<"Hell!">>};
route(<<"/about">>) -> {200, <<"text/html">>, <<"<html><body>About page</body></html>">>};
route(<<"/json">>) -> {200, <<"application/json">>, json_message(<<"Hello, World!">>)};
route(<<"/payload">>) -> {200, <<"application/octet-stream">>, persistent_term:get(payload)};
route(<<"/pingpong">>) -> {200, <<"application/octet-stream">>, pingpong()};
route(_) -> {404, <<"text/plain">>, <<"Not Found">>}.

%% OTP 25 has no JSON module; this serializes the one-field object per request.
json_message(Message) ->
    iolist_to_binary([<<"{\"message\":\"">>, json_escape(Message), <<"\"}">>]).

json_escape(S) ->
    << <<(escape_char(C))/binary>> || <<C>> <= S >>.

escape_char($") -> <<"\\\"">>;
escape_char($\\) -> <<"\\\\">>;
escape_char(C) when C < 16#20 -> iolist_to_binary(io_lib:format("\\u~4.16.0b", [C]));
escape_char(C) -> <<C>>.

send(Sock, Status, Type, Body, KeepAlive) ->
    Conn = case KeepAlive of
               true -> <<"keep-alive">>;
               false -> <<"close">>
           end,
    gen_tcp:send(Sock, [<<"HTTP/1.1 ">>, status(Status),
                        <<"\r\nServer: erlang-gen-tcp\r\nContent-Type: ">>, Type,
                        <<"\r\nContent-Length: ">>, integer_to_binary(iolist_size(Body)),
                        <<"\r\nConnection: ">>, Conn, <<"\r\n\r\n">>, Body]).

status(200) -> <<"200 OK">>;
status(400) -> <<"400 Bad Request">>;
status(404) -> <<"404 Not Found">>;
status(500) -> <<"500 Internal Server Error">>.

bad_request(Sock) ->
    _ = send(Sock, 400, <<"text/plain">>, <<"Bad Request">>, false),
    gen_tcp:close(Sock).

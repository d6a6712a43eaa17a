%% The contract's database workloads (db, queries, fortunes, updates) on pgwire, this folder's
%% own client of the PostgreSQL protocol: three named statements prepared once per connection,
%% then one Bind/Execute/Sync per query.
-module(db).
-export([start/0, enabled/0, prepare_all/1, query_count/1, world/0, worlds/1, update_worlds/1,
         fortunes/0]).
-export([connect_options/1, render_fortunes/1, escape_html/1]).

-define(WORLD_ROWS, 10000).
-define(ADDITIONAL, <<"Additional fortune added at request time.">>).

%% Opens the pool when DATABASE_URL is set; the routes exist only then.
start() ->
    case os:getenv("DATABASE_URL") of
        Url when Url =:= false; Url =:= "" -> persistent_term:put({?MODULE, enabled}, false);
        Url ->
            Size = max(1, list_to_integer(env("DATABASE_POOL", "16"))),
            {ok, _} = db_pool:start_link(connect_options(Url), Size),
            persistent_term:put({?MODULE, enabled}, true)
    end.

enabled() -> persistent_term:get({?MODULE, enabled}, false).

%% pgwire:connect/1 options from DATABASE_HOST, _PORT, _USER, _PASSWORD and _NAME, each falling
%% back to its part of DATABASE_URL.
connect_options(Url) ->
    #{host := UHost, path := "/" ++ UName} = U = uri_string:parse(Url),
    [UUser, UPassword] = string:split(maps:get(userinfo, U, ":"), ":"),
    Bin = fun(Name, Default) -> list_to_binary(env("DATABASE_" ++ Name, Default)) end,
    #{host => env("DATABASE_HOST", UHost),
      port => list_to_integer(env("DATABASE_PORT", integer_to_list(maps:get(port, U, 5432)))),
      user => Bin("USER", uri_string:percent_decode(UUser)),
      password => Bin("PASSWORD", uri_string:percent_decode(UPassword)),
      database => Bin("NAME", UName)}.

%% Called by each pool worker on its new connection.
prepare_all(Sock) ->
    Statements = [{<<"world">>, <<"SELECT id, randomnumber FROM world WHERE id = $1">>, [int4]},
                  {<<"update">>, <<"UPDATE world SET randomnumber = $1 WHERE id = $2">>, [int4, int4]},
                  {<<"fortunes">>, <<"SELECT id, message FROM fortune">>, []}],
    lists:foldl(fun({Name, Sql, Types}, ok) -> pgwire:prepare(Sock, Name, Sql, Types);
                   (_, Error) -> Error
                end, ok, Statements).
env(Name, Default) ->
    case os:getenv(Name) of
        V when V =:= false; V =:= "" -> Default;
        V -> V
    end.

%% The queries parameter: missing, empty or not a number means 1; clamped to 1..500.
query_count(Raw) when is_binary(Raw) -> query_count(binary_to_list(Raw));
query_count(Raw) when is_list(Raw) ->
    case string:to_integer(Raw) of
        {N, ""} when is_integer(N) -> min(max(N, 1), 500);
        _ -> 1
    end;
query_count(_) -> 1.

random_id() -> rand:uniform(?WORLD_ROWS).

world() -> run(fun(Sock) -> read(Sock) end).

worlds(N) -> run(fun(Sock) -> [read(Sock) || _ <- lists:seq(1, N)] end).

%% Reads N rows, one SELECT each, then gives each distinct id a new number and writes it with
%% its own UPDATE (each its own implicit transaction, so concurrent requests cannot deadlock);
%% the rows returned are the rows as written.
update_worlds(N) ->
    run(fun(Sock) ->
                Read = [read(Sock) || _ <- lists:seq(1, N)],
                New = maps:from_list([{Id, random_id()} || {Id, _} <- Read]),
                [write(Sock, Id, Number) || {Id, Number} <- lists:sort(maps:to_list(New))],
                [{Id, maps:get(Id, New)} || {Id, _} <- Read]
        end).

%% Every fortune plus the one added at request time, sorted by message (byte order of UTF-8,
%% which is code point order).
fortunes() ->
    run(fun(Sock) ->
                case pgwire:execute(Sock, <<"fortunes">>, []) of
                    {ok, Rows, _} ->
                        Fortunes = [{binary_to_integer(Id), M} || {Id, M} <- Rows],
                        lists:keysort(2, [{0, ?ADDITIONAL} | Fortunes]);
                    Other -> throw({select_fortunes, Other})
                end
        end).

read(Sock) ->
    case pgwire:execute(Sock, <<"world">>, [random_id()]) of
        {ok, [{Id, Number}], _} -> {binary_to_integer(Id), binary_to_integer(Number)};
        Other -> throw({select_world, Other})
    end.

write(Sock, Id, Number) ->
    case pgwire:execute(Sock, <<"update">>, [Number, Id]) of
        {ok, _, _} -> ok;
        Other -> throw({update_world, Other})
    end.

%% {ok, Result} or {error, Reason}: the caller answers 500 on the latter.
run(Fun) ->
    case db_pool:with_connection(fun(Sock) -> {ok, Fun(Sock)} end) of
        {ok, Result} -> {ok, Result};
        {error, {throw, {_, {error, Reason}}}} -> {error, Reason};
        {error, Reason} -> {error, Reason}
    end.

%% The fortunes page: a small template whose every cell is escaped (OTP has no template engine
%% nor an HTML escape).
render_fortunes(Rows) ->
    [<<"<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
       "<tr><th>id</th><th>message</th></tr>">>,
     [[<<"<tr><td>">>, integer_to_binary(Id), <<"</td><td>">>, escape_html(Message),
       <<"</td></tr>">>] || {Id, Message} <- Rows],
     <<"</table></body></html>">>].

escape_html(Bin) ->
    << <<(escape_char(C))/binary>> || <<C>> <= Bin >>.

escape_char($&) -> <<"&amp;">>;
escape_char($<) -> <<"&lt;">>;
escape_char($>) -> <<"&gt;">>;
escape_char($") -> <<"&quot;">>;
escape_char($') -> <<"&#39;">>;
escape_char(C) -> <<C>>.

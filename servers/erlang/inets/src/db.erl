%% The contract's database workloads (db, queries, fortunes, updates) on OTP's odbc application
%% and PostgreSQL's ODBC driver (psqlODBC, through unixODBC). Every statement is parameterised
%% (`?` markers, odbc:param_query/3); psqlODBC sends it with the extended protocol (Parse, Bind,
%% Execute of an unnamed statement), so PostgreSQL parses it again on every call.
-module(db).
-export([start/0, enabled/0, query_count/1, world/0, worlds/1, update_worlds/1, fortunes/0]).
-export([conn_str/1, render_fortunes/1, escape_html/1]).

-define(WORLD_ROWS, 10000).
-define(SELECT_WORLD, "SELECT id, randomnumber FROM world WHERE id = ?").
-define(UPDATE_WORLD, "UPDATE world SET randomnumber = ? WHERE id = ?").
-define(SELECT_FORTUNES, "SELECT id, message FROM fortune").
-define(ADDITIONAL, <<"Additional fortune added at request time.">>).

%% Opens the pool when DATABASE_URL is set; the routes exist only then.
start() ->
    case os:getenv("DATABASE_URL") of
        Url when Url =:= false; Url =:= "" -> persistent_term:put({?MODULE, enabled}, false);
        Url ->
            ok = application:ensure_started(odbc),
            Size = max(1, list_to_integer(env("DATABASE_POOL", "16"))),
            {ok, _} = db_pool:start_link(conn_str(Url), Size),
            persistent_term:put({?MODULE, enabled}, true)
    end.

enabled() -> persistent_term:get({?MODULE, enabled}, false).

%% The ODBC connection string from DATABASE_HOST, _PORT, _USER, _PASSWORD and _NAME, each
%% falling back to its part of DATABASE_URL.
conn_str(Url) ->
    #{host := UHost, path := "/" ++ UName} = U = uri_string:parse(Url),
    [UUser, UPassword] = string:split(maps:get(userinfo, U, ":"), ":"),
    Part = fun(Name, Default) -> env("DATABASE_" ++ Name, Default) end,
    lists:flatten(
      ["Driver={PostgreSQL ANSI};Server=", Part("HOST", UHost),
       ";Port=", Part("PORT", integer_to_list(maps:get(port, U, 5432))),
       ";Database=", Part("NAME", UName), ";Uid=", Part("USER", uri_string:percent_decode(UUser)),
       ";Pwd=", Part("PASSWORD", uri_string:percent_decode(UPassword)),
       ";UseServerSidePrepare=1;"]).

env(Name, Default) ->
    case os:getenv(Name) of
        V when V =:= false; V =:= "" -> Default;
        V -> V
    end.

%% The queries parameter: missing, empty or not a number means 1; clamped to 1..500.
query_count(Raw) when is_list(Raw) ->
    case string:to_integer(Raw) of
        {N, ""} when is_integer(N) -> min(max(N, 1), 500);
        _ -> 1
    end;
query_count(_) -> 1.

random_id() -> rand:uniform(?WORLD_ROWS).

world() -> run(fun(Ref) -> read(Ref) end).

worlds(N) -> run(fun(Ref) -> [read(Ref) || _ <- lists:seq(1, N)] end).

%% Reads N rows, one SELECT each, then gives each distinct id a new number and writes it with
%% its own UPDATE (auto-commit: each its own transaction, so concurrent requests cannot
%% deadlock); the rows returned are the rows as written.
update_worlds(N) ->
    run(fun(Ref) ->
                Read = [read(Ref) || _ <- lists:seq(1, N)],
                New = maps:from_list([{Id, random_id()} || {Id, _} <- Read]),
                [write(Ref, Id, Number) || {Id, Number} <- lists:sort(maps:to_list(New))],
                [{Id, maps:get(Id, New)} || {Id, _} <- Read]
        end).

%% Every fortune plus the one added at request time, sorted by message (byte order of UTF-8,
%% which is code point order).
fortunes() ->
    run(fun(Ref) ->
                {selected, _, Rows} = odbc:param_query(Ref, ?SELECT_FORTUNES, []),
                lists:keysort(2, [{0, ?ADDITIONAL} | Rows])
        end).

read(Ref) ->
    case odbc:param_query(Ref, ?SELECT_WORLD, [{sql_integer, [random_id()]}]) of
        {selected, _, [{Id, Number}]} -> {Id, Number};
        Other -> throw({select_world, Other})
    end.

write(Ref, Id, Number) ->
    case odbc:param_query(Ref, ?UPDATE_WORLD, [{sql_integer, [Number]}, {sql_integer, [Id]}]) of
        {updated, _} -> ok;
        Other -> throw({update_world, Other})
    end.

%% {ok, Result} or {error, Reason}: the caller answers 500 on the latter.
run(Fun) ->
    case db_pool:with_connection(fun(Ref) -> {ok, Fun(Ref)} end) of
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

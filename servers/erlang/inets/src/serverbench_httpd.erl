%% The contract's routes as an inets httpd module: httpd calls do/1 for every request with the
%% parsed request in a #mod record; the answer is returned, httpd writes it.
-module(serverbench_httpd).
-export([do/1]).

-include_lib("inets/include/httpd.hrl").

do(#mod{request_uri = Uri}) ->
    {Path, Query} = split(Uri),
    {Status, Type, Body} = route(Path, Query),
    Head = [{code, Status}, {content_type, Type},
            {content_length, integer_to_list(iolist_size(Body))}],
    {proceed, [{response, {response, Head, Body}}]}.

split(Uri) ->
    case string:split(Uri, "?") of
        [Path] -> {Path, ""};
        [Path, Query] -> {Path, Query}
    end.

route(Path, Query) ->
    case db:enabled() of
        true -> database(Path, Query);
        false -> route(Path)
    end.

%% /db, /queries, /fortunes, /updates (only when DATABASE_URL is set); a database error
%% answers 500.
database("/db", _) -> json(db:world(), fun world_json/1);
database("/queries", Query) -> json(db:worlds(queries(Query)), fun worlds_json/1);
database("/updates", Query) -> json(db:update_worlds(queries(Query)), fun worlds_json/1);
database("/fortunes", _) ->
    case db:fortunes() of
        {ok, Rows} -> {200, "text/html; charset=utf-8", db:render_fortunes(Rows)};
        {error, Reason} -> db_error(Reason)
    end;
database(Path, _) -> route(Path).

queries(Query) ->
    case uri_string:dissect_query(Query) of
        Pairs when is_list(Pairs) -> db:query_count(proplists:get_value("queries", Pairs));
        _ -> 1
    end.

json({ok, Value}, Encode) -> {200, "application/json", Encode(Value)};
json({error, Reason}, _) -> db_error(Reason).

db_error(Reason) ->
    io:format("erlang/inets: database: ~p~n", [Reason]),
    {500, "text/plain", <<"Internal Server Error">>}.

world_json({Id, Number}) ->
    [<<"{\"id\":">>, integer_to_binary(Id), <<",\"randomNumber\":">>, integer_to_binary(Number),
     <<"}">>].

worlds_json(Worlds) ->
    [$[, lists:join($,, [world_json(W) || W <- Worlds]), $]].

route("/hello") -> {200, "text/plain", <<"Hello World!">>};
route("/hey") -> {200, "text/plain", <<"Hey!">>};
route("/hell") -> {200, "text/plain", <<"Hell!">>};
route("/about") -> {200, "text/html", <<"<html><body>About page</body></html>">>};
route("/json") -> {200, "application/json", json_message(<<"Hello, World!">>)};
route("/payload") -> {200, "application/octet-stream", persistent_term:get(payload)};
route("/pingpong") -> {200, "application/octet-stream", server:pingpong()};
route(_) -> {404, "text/plain", <<"Not Found">>}.

%% OTP 25 has neither a JSON module nor one in inets: the one-field object is serialized here,
%% per request.
json_message(Message) ->
    iolist_to_binary([<<"{\"message\":\"">>, json_escape(Message), <<"\"}">>]).

json_escape(S) ->
    << <<(escape_char(C))/binary>> || <<C>> <= S >>.

escape_char($") -> <<"\\\"">>;
escape_char($\\) -> <<"\\\\">>;
escape_char(C) when C < 16#20 -> iolist_to_binary(io_lib:format("\\u~4.16.0b", [C]));
escape_char(C) -> <<C>>.

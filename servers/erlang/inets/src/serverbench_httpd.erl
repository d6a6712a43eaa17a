%% The contract's routes as an inets httpd module: httpd calls do/1 for every request with the
%% parsed request in a #mod record; the answer is returned, httpd writes it.
-module(serverbench_httpd).
-export([do/1]).

-include_lib("inets/include/httpd.hrl").

do(#mod{request_uri = Uri}) ->
    {Status, Type, Body} = route(path(Uri)),
    Head = [{code, Status}, {content_type, Type},
            {content_length, integer_to_list(iolist_size(Body))}],
    {proceed, [{response, {response, Head, Body}}]}.

path(Uri) ->
    case string:split(Uri, "?") of
        [Path | _] -> Path
    end.

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

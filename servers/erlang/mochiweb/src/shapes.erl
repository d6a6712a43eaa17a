%% The HTTP shapes of issue 32 (spec/contract.md) the way MochiWeb does them: recv_body for the
%% small baseline body, stream_body for the upload (counted chunk by chunk, never held; it answers
%% Expect: 100-continue before reading), /json compressed with zlib (gzip, deflate; br and zstd
%% are answered identity, which the contract allows) in the coding MochiWeb's
%% accepted_encodings/2 prefers.
-module(shapes).
-export([handle/1]).

-define(CHUNK, 65536).

%% {Status, Headers, Body} for a shape, or nomatch.
handle(Req) ->
    Method = mochiweb_request:get(method, Req),
    case {mochiweb_request:get(path, Req), Method} of
        {"/baseline", _} -> baseline(Method, Req);
        {"/upload", 'POST'} -> upload(Req);
        {"/json", _} ->
            case mochiweb_request:get_header_value("accept-encoding", Req) of
                undefined -> nomatch;
                _ -> json(Req)
            end;
        _ -> nomatch
    end.

baseline(Method, Req) ->
    Q = mochiweb_request:parse_qs(Req),
    Sum = int(proplists:get_value("a", Q)) + int(proplists:get_value("b", Q)),
    Body = case Method of
               'POST' -> int(string:trim(binary_to_list(iolist_to_binary(body(Req)))));
               _ -> 0
           end,
    plain(Sum + Body).

body(Req) ->
    case mochiweb_request:recv_body(Req) of
        undefined -> <<>>;
        B -> B
    end.

upload(Req) ->
    Count = fun({0, _}, N) -> N;
               ({_, Bin}, N) when is_binary(Bin) -> N + byte_size(Bin);
               (_, N) -> N
            end,
    N = mochiweb_request:stream_body(?CHUNK, Count, 0, Req),
    %% What recv_body/1 records after reading a body (mochiweb_request's ?SAVE_RECV): without
    %% it MochiWeb closes the connection after the answer, taking the body as unread.
    erlang:put(mochiweb_request_recv, true),
    plain(N).

json(Req) ->
    Body = iolist_to_binary(mochijson2:encode({struct, [{<<"message">>, <<"Hello, World!">>}]})),
    Vary = {"Vary", "Accept-Encoding"},
    case mochiweb_request:accepted_encodings(["gzip", "deflate", "identity"], Req) of
        ["gzip" | _] ->
            {200, [{"Content-Type", "application/json"}, {"Content-Encoding", "gzip"}, Vary],
             zlib:gzip(Body)};
        ["deflate" | _] ->
            {200, [{"Content-Type", "application/json"}, {"Content-Encoding", "deflate"}, Vary],
             zlib:compress(Body)};
        _ -> {200, [{"Content-Type", "application/json"}, Vary], Body}
    end.

int(undefined) -> 0;
int(S) ->
    case string:to_integer(S) of
        {N, _} when is_integer(N) -> N;
        _ -> 0
    end.

plain(N) -> {200, [{"Content-Type", "text/plain"}], integer_to_binary(N)}.

%% A small client of the PostgreSQL frontend/backend protocol (version 3.0), the subset the
%% database workloads need: the startup message, authentication (SCRAM-SHA-256 as PostgreSQL 15
%% defaults to, MD5 and cleartext), and the extended query protocol: each statement is parsed
%% once per connection under a name (Parse + Sync), then every query is Bind + Execute + Sync of
%% that statement, so each is its own implicit transaction. Parameters and results are in text
%% format. Not a general driver: no COPY, no notifications, no TLS, no cancellation.
-module(pgwire).
-export([connect/1, prepare/4, execute/3]).
%% Exported for the EUnit tests (pgwire_tests).
-export([scram_client_first/1, scram_client_final/4, scram_verify_server/2, encode_bind/2,
         decode_data_row/1, md5_password/3]).

-define(INT4_OID, 23).

%% Opts: #{host, port, user, password, database}. {ok, Socket} once ReadyForQuery arrives.
connect(#{host := Host, port := Port, user := User, password := Password, database := Db}) ->
    case gen_tcp:connect(Host, Port, [binary, {active, false}, {packet, raw}, {nodelay, true}]) of
        {ok, Sock} ->
            Params = <<"user", 0, User/binary, 0, "database", 0, Db/binary, 0,
                       "client_encoding", 0, "UTF8", 0, 0>>,
            ok = gen_tcp:send(Sock, <<(byte_size(Params) + 8):32, 3:16, 0:16, Params/binary>>),
            case authenticate(Sock, User, Password) of
                ok -> ready(Sock);
                Error -> gen_tcp:close(Sock), Error
            end;
        Error -> Error
    end.

%% Parses Sql under Name with Types (OIDs; the atom int4 for 23) on this connection.
prepare(Sock, Name, Sql, Types) ->
    Oids = << <<(oid(T)):32>> || T <- Types >>,
    Parse = msg($P, [Name, 0, Sql, 0, <<(length(Types)):16>>, Oids]),
    ok = gen_tcp:send(Sock, [Parse, msg($S, [])]),
    case collect(Sock, []) of
        {ok, _, _} -> ok;
        Error -> Error
    end.

%% Runs the named statement with Params (integers or binaries, sent as text): {ok, Rows, Tag}
%% with Rows a list of tuples of binaries (null as the atom null), or {error, Fields}.
execute(Sock, Name, Params) ->
    Bind = encode_bind(Name, Params),
    ok = gen_tcp:send(Sock, [Bind, msg($E, [0, <<0:32>>]), msg($S, [])]),
    collect(Sock, []).

oid(int4) -> ?INT4_OID;
oid(N) when is_integer(N) -> N.

msg(Type, Body) ->
    Bin = iolist_to_binary(Body),
    <<Type, (byte_size(Bin) + 4):32, Bin/binary>>.

%% Bind to the unnamed portal; every parameter and result in text format (format code 0).
encode_bind(Name, Params) ->
    Values = [value(P) || P <- Params],
    msg($B, [0, Name, 0, <<0:16>>, <<(length(Values)):16>>,
             [<<(byte_size(V)):32, V/binary>> || V <- Values], <<0:16>>]).

value(I) when is_integer(I) -> integer_to_binary(I);
value(B) when is_binary(B) -> B.

decode_data_row(<<Count:16, Rest/binary>>) ->
    list_to_tuple(columns(Count, Rest)).

columns(0, _) -> [];
columns(N, <<-1:32/signed, Rest/binary>>) -> [null | columns(N - 1, Rest)];
columns(N, <<Len:32, Value:Len/binary, Rest/binary>>) -> [Value | columns(N - 1, Rest)].

%% ---- reading ---------------------------------------------------------------------------------

recv_msg(Sock) ->
    case gen_tcp:recv(Sock, 5) of
        {ok, <<Type, Len:32>>} when Len =:= 4 -> {ok, Type, <<>>};
        {ok, <<Type, Len:32>>} ->
            case gen_tcp:recv(Sock, Len - 4) of
                {ok, Body} -> {ok, Type, Body};
                Error -> Error
            end;
        Error -> Error
    end.

%% Reads up to ReadyForQuery: the rows, the command tag, or the first error (after which the
%% server skips to the Sync and sends ReadyForQuery, read here too so the connection stays usable).
collect(Sock, Rows) -> collect(Sock, Rows, undefined, ok).

collect(Sock, Rows, Tag, Status) ->
    case recv_msg(Sock) of
        {ok, $D, Body} -> collect(Sock, [decode_data_row(Body) | Rows], Tag, Status);
        {ok, $C, Body} -> collect(Sock, Rows, hd(binary:split(Body, <<0>>)), Status);
        {ok, $E, Body} -> collect(Sock, Rows, Tag, {error, fields(Body)});
        {ok, $Z, _} when Status =:= ok -> {ok, lists:reverse(Rows), Tag};
        {ok, $Z, _} -> Status;
        {ok, _, _} -> collect(Sock, Rows, Tag, Status);  % ParseComplete, BindComplete, notices...
        {error, Reason} -> {error, Reason}
    end.

%% An ErrorResponse's fields as a map of field type => text (S severity, C code, M message).
fields(Body) ->
    maps:from_list([{T, V} || <<T, V/binary>> <- binary:split(Body, <<0>>, [global]), T =/= 0]).

ready(Sock) ->
    case collect(Sock, []) of
        {ok, _, _} -> {ok, Sock};
        Error -> gen_tcp:close(Sock), Error
    end.

%% ---- authentication --------------------------------------------------------------------------

authenticate(Sock, User, Password) ->
    case recv_msg(Sock) of
        {ok, $R, <<0:32>>} -> ok;
        {ok, $R, <<3:32>>} ->
            ok = gen_tcp:send(Sock, msg($p, [Password, 0])),
            authenticate(Sock, User, Password);
        {ok, $R, <<5:32, Salt:4/binary>>} ->
            ok = gen_tcp:send(Sock, msg($p, [md5_password(User, Password, Salt), 0])),
            authenticate(Sock, User, Password);
        {ok, $R, <<10:32, Mechanisms/binary>>} ->
            true = lists:member(<<"SCRAM-SHA-256">>, binary:split(Mechanisms, <<0>>, [global])),
            scram(Sock, Password);
        {ok, $E, Body} -> {error, fields(Body)};
        {ok, $R, <<Code:32, _/binary>>} -> {error, {unsupported_authentication, Code}};
        Error -> Error
    end.

md5_password(User, Password, Salt) ->
    Inner = hex(crypto:hash(md5, [Password, User])),
    <<"md5", (hex(crypto:hash(md5, [Inner, Salt])))/binary>>.

hex(Bin) -> << <<(hex_digit(N))>> || <<N:4>> <= Bin >>.
hex_digit(N) when N < 10 -> $0 + N;
hex_digit(N) -> $a + N - 10.

%% SCRAM-SHA-256 (RFC 5802, RFC 7677) without channel binding; PostgreSQL takes the user from
%% the startup message, so the SCRAM user name is empty.
scram(Sock, Password) ->
    Nonce = base64:encode(crypto:strong_rand_bytes(18)),
    {First, Bare} = scram_client_first(Nonce),
    ok = gen_tcp:send(Sock, msg($p, ["SCRAM-SHA-256", 0, <<(byte_size(First)):32>>, First])),
    case recv_msg(Sock) of
        {ok, $R, <<11:32, ServerFirst/binary>>} ->
            {Final, ServerSignature} = scram_client_final(Password, Nonce, Bare, ServerFirst),
            ok = gen_tcp:send(Sock, msg($p, [Final])),
            case recv_msg(Sock) of
                {ok, $R, <<12:32, ServerFinal/binary>>} ->
                    case scram_verify_server(ServerFinal, ServerSignature) of
                        true -> authenticate(Sock, <<>>, Password);
                        false -> {error, scram_server_signature_mismatch}
                    end;
                {ok, $E, Body} -> {error, fields(Body)};
                Other -> {error, {scram, Other}}
            end;
        {ok, $E, Body} -> {error, fields(Body)};
        Other -> {error, {scram, Other}}
    end.

scram_client_first(Nonce) ->
    Bare = <<"n=,r=", Nonce/binary>>,
    {<<"n,,", Bare/binary>>, Bare}.

%% The client-final message and the server signature to expect, from the server-first message.
scram_client_final(Password, ClientNonce, ClientFirstBare, ServerFirst) ->
    Attrs = maps:from_list([{K, V} || <<K, $=, V/binary>> <- binary:split(ServerFirst, <<",">>, [global])]),
    #{$r := Nonce, $s := Salt64, $i := Iter} = Attrs,
    true = binary:longest_common_prefix([Nonce, ClientNonce]) =:= byte_size(ClientNonce),
    Salted = crypto:pbkdf2_hmac(sha256, Password, base64:decode(Salt64), binary_to_integer(Iter), 32),
    ClientKey = crypto:mac(hmac, sha256, Salted, <<"Client Key">>),
    StoredKey = crypto:hash(sha256, ClientKey),
    WithoutProof = <<"c=biws,r=", Nonce/binary>>,
    AuthMessage = <<ClientFirstBare/binary, ",", ServerFirst/binary, ",", WithoutProof/binary>>,
    Proof = crypto:exor(ClientKey, crypto:mac(hmac, sha256, StoredKey, AuthMessage)),
    ServerKey = crypto:mac(hmac, sha256, Salted, <<"Server Key">>),
    {<<WithoutProof/binary, ",p=", (base64:encode(Proof))/binary>>,
     crypto:mac(hmac, sha256, ServerKey, AuthMessage)}.

scram_verify_server(ServerFinal, ServerSignature) ->
    ServerFinal =:= <<"v=", (base64:encode(ServerSignature))/binary>>.

%% EUnit tests of pgwire's encoders, decoders and SCRAM arithmetic (no database needed); run by
%% the server's build: `erl -noshell -pa _build -eval 'eunit:test(pgwire_tests)'`.
-module(pgwire_tests).
-include_lib("eunit/include/eunit.hrl").

%% RFC 7677, section 3: user "user", password "pencil" (the name is in the bare message there;
%% pgwire sends an empty one, which changes nothing in the arithmetic).
scram_matches_the_rfc_7677_example_test() ->
    ClientNonce = <<"rOprNGfwEbeRWgbNEkqO">>,
    Bare = <<"n=user,r=", ClientNonce/binary>>,
    ServerFirst = <<"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096">>,
    {Final, ServerSignature} = pgwire:scram_client_final(<<"pencil">>, ClientNonce, Bare, ServerFirst),
    ?assertEqual(<<"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                   "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=">>, Final),
    ?assert(pgwire:scram_verify_server(<<"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=">>,
                                       ServerSignature)).

scram_rejects_a_wrong_server_signature_test() ->
    ?assertNot(pgwire:scram_verify_server(<<"v=AAAA">>, <<1, 2, 3>>)).

scram_client_first_has_no_channel_binding_and_an_empty_name_test() ->
    ?assertEqual({<<"n,,n=,r=abc">>, <<"n=,r=abc">>}, pgwire:scram_client_first(<<"abc">>)).

scram_refuses_a_server_nonce_that_does_not_extend_ours_test() ->
    ?assertError(_, pgwire:scram_client_final(<<"pw">>, <<"abc">>, <<"n=,r=abc">>,
                                              <<"r=xyz123,s=c2FsdA==,i=1">>)).

md5_password_is_md5_of_md5_hex_and_salt_test() ->
    %% md5("secret" ++ "user") in hex, then md5 of that hex with the salt.
    Hex = fun(B) -> string:lowercase(binary:encode_hex(B)) end,
    Inner = Hex(crypto:hash(md5, <<"secretuser">>)),
    Expected = <<"md5", (Hex(crypto:hash(md5, <<Inner/binary, 1, 2, 3, 4>>)))/binary>>,
    ?assertEqual(Expected, pgwire:md5_password(<<"user">>, <<"secret">>, <<1, 2, 3, 4>>)).

bind_sends_text_parameters_to_the_unnamed_portal_test() ->
    ?assertEqual(<<$B, 24:32, 0, "w", 0, 0:16, 2:16, 2:32, "42", 1:32, "7", 0:16>>,
                 pgwire:encode_bind(<<"w">>, [42, <<"7">>])).

data_row_decodes_values_and_null_test() ->
    ?assertEqual({<<"3217">>, null, <<>>},
                 pgwire:decode_data_row(<<3:16, 4:32, "3217", -1:32/signed, 0:32>>)).

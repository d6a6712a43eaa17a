%% Stops the runtime at once on SIGTERM. The default handler calls init:stop(), an orderly
%% shutdown that takes ~2.5 s here; a benchmark server has no state worth saving.
-module(sigterm_handler).
-behaviour(gen_event).
-export([install/0, init/1, handle_event/2, handle_call/2]).

install() ->
    ok = gen_event:swap_handler(erl_signal_server, {erl_signal_handler, []}, {?MODULE, []}).

init(_) -> {ok, nostate}.

handle_event(sigterm, _State) -> erlang:halt(0);
handle_event(_Signal, State) -> {ok, State}.

handle_call(_Request, State) -> {ok, ok, State}.

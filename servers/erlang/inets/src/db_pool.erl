%% A pool of DATABASE_POOL ODBC connections. OTP's odbc binds a connection to the process that
%% opened it (only that process may query it), so each connection lives in a worker process of
%% its own; a request checks a worker out, runs its queries there and checks it back in. The
%% pool process queues callers when every worker is busy.
-module(db_pool).
-behaviour(gen_server).
-export([start_link/2, with_connection/1]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).
-export([worker_init/1]).

%% holders: a checked-out worker => the monitor of the process holding it (a holder that dies
%% gives its worker back).
-record(pool, {idle = [] :: [pid()], waiting = queue:new(), holders = #{}}).

%% ConnStr: an ODBC connection string; Size: the number of connections (opened at start).
start_link(ConnStr, Size) ->
    gen_server:start_link({local, ?MODULE}, ?MODULE, {ConnStr, Size}, []).

%% Runs Fun(OdbcRef) in a pooled connection's process and returns its result; an exception in
%% Fun comes back as {error, Reason}.
with_connection(Fun) ->
    Worker = gen_server:call(?MODULE, checkout, infinity),
    Tag = erlang:monitor(process, Worker),
    Worker ! {run, self(), Tag, Fun},
    receive
        {Tag, Result} ->
            erlang:demonitor(Tag, [flush]),
            gen_server:cast(?MODULE, {checkin, Worker}),
            Result;
        {'DOWN', Tag, process, Worker, Reason} ->
            {error, {connection_process, Reason}}
    end.

init({ConnStr, Size}) ->
    process_flag(trap_exit, true),
    persistent_term:put({?MODULE, conn_str}, ConnStr),
    Workers = [spawn_link(?MODULE, worker_init, [ConnStr]) || _ <- lists:seq(1, Size)],
    {ok, #pool{idle = Workers}}.

handle_call(checkout, {Caller, _}, Pool = #pool{idle = [Worker | Rest]}) ->
    {reply, Worker, hold(Worker, Caller, Pool#pool{idle = Rest})};
handle_call(checkout, From, Pool = #pool{idle = [], waiting = Waiting}) ->
    {noreply, Pool#pool{waiting = queue:in(From, Waiting)}}.

handle_cast({checkin, Worker}, Pool) ->
    {noreply, give(Worker, release(Worker, Pool))}.

%% A holder that died gives its worker back; a worker that died is replaced (its connection
%% with it).
handle_info({'DOWN', Mon, process, _, _}, Pool = #pool{holders = Holders}) ->
    case [W || {W, M} <- maps:to_list(Holders), M =:= Mon] of
        [Worker] -> {noreply, give(Worker, Pool#pool{holders = maps:remove(Worker, Holders)})};
        [] -> {noreply, Pool}
    end;
handle_info({'EXIT', Worker, Reason}, Pool) ->
    io:format("erlang/inets: database connection process ended: ~p~n", [Reason]),
    ConnStr = persistent_term:get({?MODULE, conn_str}),
    New = spawn_link(?MODULE, worker_init, [ConnStr]),
    Pool1 = release(Worker, Pool#pool{idle = lists:delete(Worker, Pool#pool.idle)}),
    {noreply, give(New, Pool1)}.

hold(Worker, Caller, Pool = #pool{holders = Holders}) ->
    Pool#pool{holders = Holders#{Worker => erlang:monitor(process, Caller)}}.

release(Worker, Pool = #pool{holders = Holders}) ->
    case maps:take(Worker, Holders) of
        {Mon, Rest} -> erlang:demonitor(Mon, [flush]), Pool#pool{holders = Rest};
        error -> Pool
    end.

give(Worker, Pool = #pool{waiting = Waiting, idle = Idle}) ->
    case queue:out(Waiting) of
        {{value, {Caller, _} = From}, Rest} ->
            case is_process_alive(Caller) of
                true ->
                    gen_server:reply(From, Worker),
                    hold(Worker, Caller, Pool#pool{waiting = Rest});
                false ->
                    give(Worker, Pool#pool{waiting = Rest})
            end;
        {empty, _} ->
            Pool#pool{idle = [Worker | Idle]}
    end.

%% ---- a worker: one ODBC connection (one odbcserver port program, one psqlODBC handle) ------

worker_init(ConnStr) ->
    worker_loop(ConnStr, connect(ConnStr)).

%% The connection is opened lazily and reopened after a failure, on the next request.
connect(ConnStr) ->
    Options = [{auto_commit, on}, {scrollable_cursors, off}, {binary_strings, on},
               {tuple_row, on}, {timeout, 30000}],
    case odbc:connect(ConnStr, Options) of
        {ok, Ref} -> Ref;
        {error, Reason} ->
            io:format("erlang/inets: database connection failed: ~p~n", [Reason]),
            none
    end.

worker_loop(ConnStr, Ref) ->
    receive
        {run, Caller, Tag, Fun} ->
            Ref1 = case Ref of none -> connect(ConnStr); _ -> Ref end,
            Result = case Ref1 of
                         none -> {error, no_connection};
                         _ -> try Fun(Ref1) catch Class:Reason -> {error, {Class, Reason}} end
                     end,
            Caller ! {Tag, Result},
            worker_loop(ConnStr, healthy(Ref1, Result))
    end.

%% After a lost connection the handle is dropped (and the port closed) so the next job reconnects.
healthy(none, _) -> none;
healthy(Ref, {error, connection_closed}) -> catch odbc:disconnect(Ref), none;
healthy(Ref, _) -> Ref.

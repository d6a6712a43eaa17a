%% A pool of DATABASE_POOL PostgreSQL connections (pgwire). Each connection is owned by a worker
%% process that has prepared the workloads' statements on it; a request checks a worker out, runs
%% its queries there and checks it back in. The pool process queues callers when every worker is
%% busy.
-module(db_pool).
-behaviour(gen_server).
-export([start_link/2, with_connection/1]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).
-export([worker_init/1]).

%% holders: a checked-out worker => the monitor of the process holding it (a holder that dies
%% gives its worker back).
-record(pool, {idle = [] :: [pid()], waiting = queue:new(), holders = #{}}).

%% Opts: pgwire:connect/1 options; Size: the number of connections (opened at start).
start_link(Opts, Size) ->
    gen_server:start_link({local, ?MODULE}, ?MODULE, {Opts, Size}, []).

%% Runs Fun(Socket) in a pooled connection's process and returns its result; an exception in
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

init({Opts, Size}) ->
    process_flag(trap_exit, true),
    persistent_term:put({?MODULE, opts}, Opts),
    Workers = [spawn_link(?MODULE, worker_init, [Opts]) || _ <- lists:seq(1, Size)],
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
    io:format("erlang/gen-tcp: database connection process ended: ~p~n", [Reason]),
    New = spawn_link(?MODULE, worker_init, [persistent_term:get({?MODULE, opts})]),
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

%% ---- a worker: one connection, its statements prepared once ---------------------------------

worker_init(Opts) ->
    worker_loop(Opts, connect(Opts)).

%% The connection is opened at start and reopened after a failure, on the next request.
connect(Opts) ->
    case pgwire:connect(Opts) of
        {ok, Sock} ->
            case db:prepare_all(Sock) of
                ok -> Sock;
                Error -> gen_tcp:close(Sock), log_failure(Error)
            end;
        Error -> log_failure(Error)
    end.

log_failure(Reason) ->
    io:format("erlang/gen-tcp: database connection failed: ~p~n", [Reason]),
    none.

worker_loop(Opts, Sock) ->
    receive
        {run, Caller, Tag, Fun} ->
            Sock1 = case Sock of none -> connect(Opts); _ -> Sock end,
            Result = case Sock1 of
                         none -> {error, no_connection};
                         _ -> try Fun(Sock1) catch Class:Reason -> {error, {Class, Reason}} end
                     end,
            Caller ! {Tag, Result},
            worker_loop(Opts, healthy(Sock1, Result))
    end.

%% After a socket error the connection is dropped so the next job reconnects; a server error
%% (an ErrorResponse, a map) leaves it usable.
healthy(none, _) -> none;
healthy(Sock, {error, {_, {_, {error, Reason}}}}) when is_atom(Reason) -> gen_tcp:close(Sock), none;
healthy(Sock, {error, Reason}) when is_atom(Reason) -> gen_tcp:close(Sock), none;
healthy(Sock, _) -> Sock.

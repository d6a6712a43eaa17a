(* Message passing between fibers, on the same domain or across domains (the shapes of
   Eio.Promise and Eio.Stream, unbounded). A fiber that must wait suspends with
   [Sched.suspend]; whoever resumes it calls the [wake] function it left, from any domain. *)

module Promise = struct
  type 'a state = Empty | Waiting of ('a -> unit) | Resolved of 'a
  type 'a t = 'a state Atomic.t

  let create () = Atomic.make Empty

  let resolve t v =
    match Atomic.exchange t (Resolved v) with
    | Waiting wake -> wake v
    | Empty -> ()
    | Resolved _ -> invalid_arg "Promise.resolve: already resolved"

  (* One fiber awaits a promise. *)
  let await t =
    match Atomic.get t with
    | Resolved v -> v
    | Waiting _ -> invalid_arg "Promise.await: already awaited"
    | Empty ->
        Sched.suspend (fun wake ->
            if not (Atomic.compare_and_set t Empty (Waiting wake)) then
              match Atomic.get t with
              | Resolved v -> wake v
              | Empty | Waiting _ -> assert false)
end

module Stream = struct
  type 'a t = { lock : Mutex.t; items : 'a Queue.t; takers : ('a -> unit) Queue.t }

  let create () = { lock = Mutex.create (); items = Queue.create (); takers = Queue.create () }

  let add t v =
    Mutex.lock t.lock;
    match Queue.take_opt t.takers with
    | Some wake ->
        Mutex.unlock t.lock;
        wake v
    | None ->
        Queue.push v t.items;
        Mutex.unlock t.lock

  (* The oldest item; suspends the fiber while there is none. The lock is released by the
     handler, once the fiber's [wake] is queued: no [add] can slip in between. *)
  let take t =
    Mutex.lock t.lock;
    match Queue.take_opt t.items with
    | Some v ->
        Mutex.unlock t.lock;
        v
    | None ->
        Sched.suspend (fun wake ->
            Queue.push wake t.takers;
            Mutex.unlock t.lock)
end

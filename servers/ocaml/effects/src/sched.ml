(* One scheduler of lightweight fibers per domain, on OCaml 5 effect handlers and epoll.

   A fiber is plain direct-style code run under [Effect.Deep.try_with]. Sockets are
   non-blocking and registered once, edge-triggered, with the domain's epoll set. An I/O call
   first tries the system call; on EAGAIN the fiber performs [Await_readable fd] (or
   [Await_writable fd]), the handler parks its continuation in the domain's table under that
   descriptor, and the loop resumes it when epoll reports the descriptor ready (a spurious
   wake-up only makes the fiber try again). An edge that comes while no fiber is parked on its
   descriptor (the fiber is running, queued, or parked for the other direction) is kept as a
   pending bit and consumed by the next park: with edge triggering it will not come again. [Suspend] is the general form: it hands a
   [wake] function to whoever will resume the fiber, possibly from another domain (see [Sync]);
   a foreign domain pushes onto an atomic list and, if the owner sleeps in epoll_wait, writes
   to its eventfd. *)

external epoll_create : unit -> int = "sb_epoll_create"
external epoll_add : int -> int -> int -> bool = "sb_epoll_add" [@@noalloc]

type events = (int, Bigarray.int_elt, Bigarray.c_layout) Bigarray.Array1.t

external epoll_wait : int -> events -> int -> int = "sb_epoll_wait"
external eventfd : unit -> int = "sb_eventfd"
external eventfd_signal : int -> unit = "sb_eventfd_signal" [@@noalloc]
external eventfd_drain : int -> unit = "sb_eventfd_drain" [@@noalloc]
external accept_raw : int -> int = "sb_accept" [@@noalloc]
external recv_raw : int -> bytes -> int -> int -> int = "sb_recv" [@@noalloc]
external send_bytes_raw : int -> bytes -> int -> int -> int = "sb_send" [@@noalloc]
external send_string_raw : int -> string -> int -> int -> int = "sb_send" [@@noalloc]
external close : int -> unit = "sb_close" [@@noalloc]

(* Unix.file_descr is the descriptor number on Unix. *)
external int_of_fd : Unix.file_descr -> int = "%identity"

(* Flags shared with poll_stubs.c. *)
let flag_read = 1
let flag_write = 2
let flag_edge = 4
let flag_exclusive = 8

type _ Effect.t +=
  | Await_readable : int -> unit Effect.t
  | Await_writable : int -> unit Effect.t
  | Yield : unit Effect.t
  | Suspend : (('a -> unit) -> unit) -> 'a Effect.t

type waiters = (unit, unit) Effect.Deep.continuation option array

type t = {
  owner : int;  (** the domain that runs this scheduler *)
  epoll : int;
  events : events;
  runq : (unit -> unit) Queue.t;
  mutable readers : waiters;  (** indexed by descriptor *)
  mutable writers : waiters;
  mutable pending : Bytes.t;
      (** per descriptor, edges no fiber was parked for: [flag_read], [flag_write] bits *)
  wakeup : int;  (** eventfd another domain writes to wake this one *)
  remote : (unit -> unit) list Atomic.t;  (** work pushed by other domains, newest first *)
  sleeping : bool Atomic.t;
  mutable budget : int;  (** successful I/O calls left before the running fiber yields *)
}

(* A fiber that never meets EAGAIN (an echo client that keeps sending) yields after this
   many successful calls, so it cannot starve the others. *)
let budget = 64
let max_events = 256

let create () =
  let epoll = epoll_create () and wakeup = eventfd () in
  ignore (epoll_add epoll wakeup flag_read : bool);
  {
    owner = (Domain.self () :> int);
    epoll;
    events = Bigarray.Array1.create Bigarray.int Bigarray.c_layout (2 * max_events);
    runq = Queue.create ();
    readers = Array.make 1024 None;
    writers = Array.make 1024 None;
    pending = Bytes.make 1024 '\000';
    wakeup;
    remote = Atomic.make [];
    sleeping = Atomic.make false;
    budget;
  }

let key = Domain.DLS.new_key create
let current () = Domain.DLS.get key

(* ---- waking fibers ---- *)

let rec push_remote s thunk =
  let old = Atomic.get s.remote in
  if not (Atomic.compare_and_set s.remote old (thunk :: old)) then push_remote s thunk
  else if Atomic.get s.sleeping then eventfd_signal s.wakeup

(* Runs [thunk] on [s]'s domain, from any domain. *)
let schedule s thunk =
  if (Domain.self () :> int) = s.owner then Queue.push thunk s.runq else push_remote s thunk

let take_remote s =
  match Atomic.exchange s.remote [] with
  | [] -> ()
  | work -> List.iter (fun thunk -> Queue.push thunk s.runq) (List.rev work)

let grow table fd =
  let bigger = Array.make (max (fd + 1) (2 * Array.length table)) None in
  Array.blit table 0 bigger 0 (Array.length table);
  bigger

(* Makes the per-descriptor tables reach [fd]. *)
let ensure s fd =
  if fd >= Array.length s.readers then begin
    s.readers <- grow s.readers fd;
    s.writers <- grow s.writers fd;
    let bigger = Bytes.make (Array.length s.readers) '\000' in
    Bytes.blit s.pending 0 bigger 0 (Bytes.length s.pending);
    s.pending <- bigger
  end

let pending_bits s fd = Char.code (Bytes.unsafe_get s.pending fd)
let set_pending s fd bits = Bytes.unsafe_set s.pending fd (Char.unsafe_chr bits)

(* Parks [k] until [fd] is ready, or resumes it at once if an edge already came. *)
let park s fd k ~write =
  ensure s fd;
  let bit = if write then flag_write else flag_read in
  let bits = pending_bits s fd in
  if bits land bit <> 0 then begin
    set_pending s fd (bits land lnot bit);
    Queue.push (fun () -> Effect.Deep.continue k ()) s.runq
  end
  else if write then s.writers.(fd) <- Some k
  else s.readers.(fd) <- Some k

let unpark s table fd bit =
  ensure s fd;
  match Array.unsafe_get table fd with
  | Some k ->
      Array.unsafe_set table fd None;
      Queue.push (fun () -> Effect.Deep.continue k ()) s.runq
  | None -> set_pending s fd (pending_bits s fd lor bit)

(* ---- fibers ---- *)

let report_failure e =
  Printf.eprintf "ocaml/effects: fiber failed: %s\n%!" (Printexc.to_string e)

let exec s f =
  Effect.Deep.try_with
    (fun () -> try f () with e -> report_failure e)
    ()
    {
      effc =
        (fun (type a) (e : a Effect.t) ->
          match e with
          | Await_readable fd ->
              Some (fun (k : (a, unit) Effect.Deep.continuation) -> park s fd k ~write:false)
          | Await_writable fd ->
              Some (fun (k : (a, unit) Effect.Deep.continuation) -> park s fd k ~write:true)
          | Yield ->
              Some
                (fun (k : (a, unit) Effect.Deep.continuation) ->
                  Queue.push (fun () -> Effect.Deep.continue k ()) s.runq)
          | Suspend register ->
              Some
                (fun (k : (a, unit) Effect.Deep.continuation) ->
                  register (fun v -> schedule s (fun () -> Effect.Deep.continue k v)))
          | _ -> None);
    }

(* Starts [f] as a new fiber of the calling domain's scheduler. *)
let fork f =
  let s = current () in
  Queue.push (fun () -> exec s f) s.runq

let yield () = Effect.perform Yield

(* Suspends the fiber until [wake v] is called (once, from any domain); returns [v]. *)
let suspend register = Effect.perform (Suspend register)

(* ---- the loop ---- *)

let poll s =
  let timeout =
    if not (Queue.is_empty s.runq) then 0
    else begin
      Atomic.set s.sleeping true;
      match Atomic.get s.remote with [] -> -1 | _ -> 0
    end
  in
  let n = epoll_wait s.epoll s.events timeout in
  Atomic.set s.sleeping false;
  for i = 0 to n - 1 do
    let fd = Bigarray.Array1.unsafe_get s.events (2 * i)
    and ready = Bigarray.Array1.unsafe_get s.events ((2 * i) + 1) in
    if fd = s.wakeup then eventfd_drain fd
    else begin
      if ready land flag_read <> 0 then unpark s s.readers fd flag_read;
      if ready land flag_write <> 0 then unpark s s.writers fd flag_write
    end
  done;
  take_remote s

(* Runs the fibers that were ready when the batch started, then polls; never returns. *)
let run main =
  let s = current () in
  fork main;
  while true do
    for _ = 1 to Queue.length s.runq do
      (Queue.pop s.runq) ()
    done;
    poll s
  done

(* ---- non-blocking I/O in direct style ---- *)

exception Connection_lost

let spend () =
  let s = current () in
  s.budget <- s.budget - 1;
  if s.budget <= 0 then begin
    s.budget <- budget;
    yield ()
  end

(* Makes a listening socket's readiness wake this domain's accepting fiber; EPOLLEXCLUSIVE
   wakes one of the domains waiting on it rather than all. *)
let watch_listener fd =
  if not (epoll_add (current ()).epoll fd (flag_read lor flag_exclusive)) then
    failwith "epoll_ctl: cannot watch the listening socket"

(* The next connection on [listen] (non-blocking, TCP_NODELAY), registered with this domain. *)
let rec accept listen =
  let fd = accept_raw listen in
  if fd >= 0 then begin
    let s = current () in
    (* A descriptor number is reused: edges kept for the previous connection are not ours. *)
    ensure s fd;
    set_pending s fd 0;
    if not (epoll_add s.epoll fd (flag_read lor flag_write lor flag_edge)) then begin
      close fd;
      accept listen
    end
    else begin
      spend ();
      fd
    end
  end
  else begin
    (* -1: nothing pending. -2: aborted connection or out of descriptors: let others run. *)
    if fd = -1 then Effect.perform (Await_readable listen) else yield ();
    accept listen
  end

(* Suspends the fiber until [fd] is readable. A caller whose last [recv] returned fewer bytes
   than it asked for calls this first: the socket was empty then (epoll(7) says so for stream
   sockets), anything since has raised a new edge, and the try that would fail is saved. *)
let await_readable fd = Effect.perform (Await_readable fd)

(* Reads at most [len] bytes; 0 at end of stream (or on a connection error). *)
let rec recv fd buf off len =
  let n = recv_raw fd buf off len in
  if n > 0 then begin
    spend ();
    n
  end
  else if n = -1 then begin
    Effect.perform (Await_readable fd);
    recv fd buf off len
  end
  else 0

let rec send_all raw fd data off len =
  if len > 0 then begin
    let n = raw fd data off len in
    if n = len then ()
    else if n >= 0 then begin
      (* A short send means a full socket: wait for room rather than try again. *)
      Effect.perform (Await_writable fd);
      send_all raw fd data (off + n) (len - n)
    end
    else if n = -1 then begin
      Effect.perform (Await_writable fd);
      send_all raw fd data off len
    end
    else raise Connection_lost
  end

let send_bytes fd b off len = send_all send_bytes_raw fd b off len
let send_string fd s off len = send_all send_string_raw fd s off len

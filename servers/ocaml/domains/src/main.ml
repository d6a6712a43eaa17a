(* serverbench ocaml/domains: multicore OCaml 5 with the standard library only.
   WORKERS domains accept on the shared listening sockets (blocking Unix I/O); each accepted
   connection is served by a system thread of the domain that accepted it, so a domain keeps
   many connections going while each of its threads blocks in read/write. A separate domain is
   the /pingpong worker, fed through a Mutex/Condition queue. *)

let env name default =
  match Sys.getenv_opt name with Some "" | None -> default | Some v -> v

let payload = String.init (1 lsl 20) (fun i -> Char.chr (Char.code 'a' + (i mod 26)))

(* ---- /pingpong: a queue guarded by a Mutex, a Condition to wake the worker domain ---- *)

type reply = { lock : Mutex.t; ready : Condition.t; mutable body : string option }

let queue : reply Queue.t = Queue.create ()
let queue_lock = Mutex.create ()
let queue_nonempty = Condition.create ()

let pingpong_worker () =
  while true do
    Mutex.lock queue_lock;
    while Queue.is_empty queue do Condition.wait queue_nonempty queue_lock done;
    let r = Queue.pop queue in
    Mutex.unlock queue_lock;
    Mutex.lock r.lock;
    r.body <- Some payload;
    Condition.signal r.ready;
    Mutex.unlock r.lock
  done

let pingpong () =
  let r = { lock = Mutex.create (); ready = Condition.create (); body = None } in
  Mutex.lock queue_lock;
  Queue.push r queue;
  Condition.signal queue_nonempty;
  Mutex.unlock queue_lock;
  Mutex.lock r.lock;
  let rec wait () =
    match r.body with Some b -> b | None -> Condition.wait r.ready r.lock; wait ()
  in
  let body = wait () in
  Mutex.unlock r.lock;
  body

(* ---- routing ---- *)

let json_message msg = Printf.sprintf {|{"message":%S}|} msg

let route = function
  | "/hello" -> (200, "text/plain", "Hello World!")
  | "/hey" -> (200, "text/plain", "Hey!")
  | "/hell" -> (200, "text/plain", "Hell!")
  | "/about" -> (200, "text/html", "<html><body>About page</body></html>")
  | "/json" -> (200, "application/json", json_message "Hello, World!")
  | "/payload" -> (200, "application/octet-stream", payload)
  | "/pingpong" -> (200, "application/octet-stream", pingpong ())
  | _ -> (404, "text/plain", "Not Found")

(* ---- HTTP/1.1 over a blocking socket ---- *)

exception Bad_request

let rec write_all fd s off len =
  if len > 0 then
    let n = Unix.write_substring fd s off len in
    write_all fd s (off + n) (len - n)

let lowercase_trim s = String.lowercase_ascii (String.trim s)

(* Parses the head in buf.[start .. stop) (request line and headers, no final CRLFCRLF):
   returns (path, keep_alive, content_length). *)
let parse_head buf start stop =
  let head = Bytes.sub_string buf start (stop - start) in
  match String.split_on_char '\n' head with
  | [] -> raise Bad_request
  | request_line :: headers ->
      let path, version =
        match String.split_on_char ' ' (String.trim request_line) with
        | [ _meth; target; version ] ->
            let path =
              match String.index_opt target '?' with
              | Some i -> String.sub target 0 i
              | None -> target
            in
            (path, version)
        | _ -> raise Bad_request
      in
      let keep_alive = ref (version = "HTTP/1.1") and length = ref 0 in
      List.iter
        (fun line ->
          match String.index_opt line ':' with
          | None -> ()
          | Some i -> (
              let value = lowercase_trim (String.sub line (i + 1) (String.length line - i - 1)) in
              match lowercase_trim (String.sub line 0 i) with
              | "connection" ->
                  let tokens = List.map String.trim (String.split_on_char ',' value) in
                  if List.mem "close" tokens then keep_alive := false
                  else if List.mem "keep-alive" tokens then keep_alive := true
              | "content-length" -> (
                  match int_of_string_opt value with
                  | Some n when n >= 0 -> length := n
                  | _ -> raise Bad_request)
              | _ -> ()))
        headers;
      (path, !keep_alive, !length)

let reason = function 200 -> "OK" | 400 -> "Bad Request" | _ -> "Not Found"

let flush_out fd out =
  if Buffer.length out > 0 then begin
    write_all fd (Buffer.contents out) 0 (Buffer.length out);
    Buffer.clear out
  end

(* Appends the response to out; a large body is written straight from its string instead. *)
let respond fd out (status, content_type, body) keep_alive =
  Printf.bprintf out
    "HTTP/1.1 %d %s\r\nServer: ocaml-domains\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: %s\r\n\r\n"
    status (reason status) content_type (String.length body)
    (if keep_alive then "keep-alive" else "close");
  if String.length body <= 16384 then Buffer.add_string out body
  else begin
    flush_out fd out;
    write_all fd body 0 (String.length body)
  end

(* Index of the first "\r\n\r\n" in buf.[from .. stop), or -1. *)
let find_end buf from stop =
  let rec go i =
    if i + 3 >= stop then -1
    else if Bytes.get buf i = '\r' && Bytes.get buf (i + 1) = '\n'
            && Bytes.get buf (i + 2) = '\r' && Bytes.get buf (i + 3) = '\n'
    then i
    else go (i + 1)
  in
  go from

let max_head = 65536

(* Reads into buf; answers every complete request in it, in order, in one write; keeps the
   incomplete rest at the front of the buffer for the next read. *)
let serve_http fd =
  let buf = Bytes.create (2 * max_head) and out = Buffer.create 4096 in
  let rec loop filled skip =
    let n = Unix.read fd buf filled (Bytes.length buf - filled) in
    if n > 0 then begin
      let stop = filled + n in
      (* Bytes still owed to the previous request's body come first. *)
      let skipped = min skip n in
      let rec answer start =
        match find_end buf start stop with
        | -1 -> `More start
        | e ->
            let path, keep_alive, length = parse_head buf start e in
            respond fd out (route path) keep_alive;
            let body_start = e + 4 in
            let avail = stop - body_start in
            if not keep_alive then `Close
            else if length <= avail then answer (body_start + length)
            else `Skip (length - avail)
      in
      (* A kept incomplete request starts at 0, so the search for its end starts there too
         (its "\r\n\r\n" may straddle the old and the new bytes); body bytes owed to a
         previous request only ever arrive into an empty buffer. *)
      let result = if skip > n then `Skip (skip - n) else answer skipped in
      flush_out fd out;
      match result with
      | `Close -> ()
      | `Skip rest -> loop 0 rest
      | `More start ->
          let rest = stop - start in
          if rest >= max_head then raise Bad_request;
          Bytes.blit buf start buf 0 rest;
          loop rest 0
    end
  in
  try loop 0 0
  with Bad_request ->
    respond fd out (400, "text/plain", "Bad Request") false;
    flush_out fd out

(* ---- TCP echo ---- *)

let serve_echo fd =
  let buf = Bytes.create 65536 in
  let rec loop () =
    let n = Unix.read fd buf 0 (Bytes.length buf) in
    if n > 0 then begin
      ignore (Unix.write fd buf 0 n);
      loop ()
    end
  in
  loop ()

(* ---- accepting ---- *)

let connection handler fd =
  (try handler fd with Unix.Unix_error _ | Sys_error _ | End_of_file -> ());
  try Unix.close fd with Unix.Unix_error _ -> ()

let rec accept_loop listen handler =
  (match Unix.accept ~cloexec:true listen with
   | fd, _ ->
       Unix.setsockopt fd Unix.TCP_NODELAY true;
       ignore (Thread.create (connection handler) fd)
   | exception Unix.Unix_error ((Unix.EINTR | Unix.ECONNABORTED | Unix.EMFILE), _, _) -> ());
  accept_loop listen handler

let listen_on host port =
  let addr = Unix.inet_addr_of_string host in
  let sa = Unix.ADDR_INET (addr, port) in
  let fd = Unix.socket ~cloexec:true (Unix.domain_of_sockaddr sa) Unix.SOCK_STREAM 0 in
  Unix.setsockopt fd Unix.SO_REUSEADDR true;
  Unix.bind fd sa;
  Unix.listen fd 1024;
  fd

let () =
  if Array.mem "--version" Sys.argv then begin
    Printf.printf "OCaml %s (ocaml/domains)\n" Sys.ocaml_version;
    exit 0
  end;
  let host = env "HOST" "127.0.0.1" in
  let port = int_of_string (env "PORT" "8080") in
  let echo_port = int_of_string (env "ECHO_PORT" "9000") in
  let workers = max 1 (int_of_string (env "WORKERS" "1")) in
  Sys.set_signal Sys.sigpipe Sys.Signal_ignore;
  (* SIGTERM is blocked everywhere (domains inherit the mask) and awaited below. *)
  ignore (Thread.sigmask Unix.SIG_BLOCK [ Sys.sigterm ]);
  let http = listen_on host port and echo = listen_on host echo_port in
  let _pingpong = Domain.spawn pingpong_worker in
  let _domains =
    List.init workers (fun _ ->
        Domain.spawn (fun () ->
            ignore (Thread.create (fun () -> accept_loop echo serve_echo) ());
            accept_loop http serve_http))
  in
  Printf.printf "ocaml/domains: http on %s:%d, echo on %s:%d, %d domains (OCaml %s)\n%!" host
    port host echo_port workers Sys.ocaml_version;
  ignore (Thread.wait_signal [ Sys.sigterm ]);
  Unix._exit 0

(* serverbench ocaml/effects: OCaml 5 fibers on the standard library's effect handlers.
   WORKERS domains each run one scheduler (Sched) and accept on the shared, non-blocking HTTP
   and echo listening sockets; every connection is a fiber written in direct style. /pingpong
   hands each request to a worker fiber through a Sync.Stream and waits on a Sync.Promise. *)

let env name default = match Sys.getenv_opt name with Some "" | None -> default | Some v -> v

let payload = String.init (1 lsl 20) (fun i -> Char.chr (Char.code 'a' + (i mod 26)))

(* ---- /pingpong: a worker fiber fed through a stream; it may live on another domain ---- *)

let requests : string Sync.Promise.t Sync.Stream.t = Sync.Stream.create ()

let pingpong_worker () =
  while true do
    Sync.Promise.resolve (Sync.Stream.take requests) payload
  done

let pingpong () =
  let reply = Sync.Promise.create () in
  Sync.Stream.add requests reply;
  Sync.Promise.await reply

(* ---- routing ---- *)

let json_string b s =
  Buffer.add_char b '"';
  String.iter
    (function
      | '"' -> Buffer.add_string b "\\\""
      | '\\' -> Buffer.add_string b "\\\\"
      | c when c < ' ' -> Printf.bprintf b "\\u%04x" (Char.code c)
      | c -> Buffer.add_char b c)
    s;
  Buffer.add_char b '"'

(* {"message": msg}, serialized per request as the contract asks. *)
let json_message msg =
  let b = Buffer.create 32 in
  Buffer.add_string b {|{"message":|};
  json_string b msg;
  Buffer.add_char b '}';
  Buffer.contents b

let ok content_type body = { Http.status = 200; content_type; body }
let hello = ok "text/plain" "Hello World!"
let hey = ok "text/plain" "Hey!"
let hell = ok "text/plain" "Hell!"
let about = ok "text/html" "<html><body>About page</body></html>"
let not_found = { Http.status = 404; content_type = "text/plain"; body = "Not Found" }
let octets = "application/octet-stream"

let route = function
  | "/hello" -> hello
  | "/hey" -> hey
  | "/hell" -> hell
  | "/about" -> about
  | "/json" -> ok "application/json" (json_message "Hello, World!")
  | "/payload" -> ok octets payload
  | "/pingpong" -> ok octets (pingpong ())
  | _ -> not_found

(* ---- TCP echo ---- *)

let serve_echo fd =
  let buf = Bytes.create 65536 in
  (* [drained]: the last read emptied the socket (see Sched.await_readable). *)
  let rec loop ~drained =
    if drained then Sched.await_readable fd;
    let n = Sched.recv fd buf 0 (Bytes.length buf) in
    if n > 0 then begin
      Sched.send_bytes fd buf 0 n;
      loop ~drained:(n < Bytes.length buf)
    end
  in
  loop ~drained:false

(* ---- accepting ---- *)

let connection handler fd () =
  Fun.protect ~finally:(fun () -> Sched.close fd) (fun () ->
      try handler fd with Sched.Connection_lost -> ())

let accept_loop listen handler () =
  Sched.watch_listener listen;
  while true do
    let fd = Sched.accept listen in
    Sched.fork (connection handler fd)
  done

let listen_on host port =
  let sa = Unix.ADDR_INET (Unix.inet_addr_of_string host, port) in
  let fd = Unix.socket ~cloexec:true (Unix.domain_of_sockaddr sa) Unix.SOCK_STREAM 0 in
  Unix.setsockopt fd Unix.SO_REUSEADDR true;
  Unix.bind fd sa;
  Unix.listen fd 1024;
  Unix.set_nonblock fd;
  Sched.int_of_fd fd

(* One domain's scheduler: an accepting fiber per listening socket (and the /pingpong worker
   on the first domain). Never returns. *)
let serve_domain ~http ~echo ~pingpong_here () =
  Sched.run (fun () ->
      if pingpong_here then Sched.fork pingpong_worker;
      Sched.fork (accept_loop echo serve_echo);
      accept_loop http (Http.serve route) ())

let () =
  if Array.mem "--version" Sys.argv then begin
    Printf.printf "OCaml %s (ocaml/effects)\n" Sys.ocaml_version;
    exit 0
  end;
  let host = env "HOST" "127.0.0.1" in
  let port = int_of_string (env "PORT" "8080") in
  let echo_port = int_of_string (env "ECHO_PORT" "9000") in
  let workers = max 1 (int_of_string (env "WORKERS" "1")) in
  (* SIGTERM keeps its default action: the process ends at once. *)
  Sys.set_signal Sys.sigpipe Sys.Signal_ignore;
  let http = listen_on host port and echo = listen_on host echo_port in
  let others =
    List.init (workers - 1) (fun _ ->
        Domain.spawn (serve_domain ~http ~echo ~pingpong_here:false))
  in
  ignore (others : unit Domain.t list);
  Printf.printf "ocaml/effects: http on %s:%d, echo on %s:%d, %d domains (OCaml %s)\n%!" host port
    host echo_port workers Sys.ocaml_version;
  serve_domain ~http ~echo ~pingpong_here:true ()

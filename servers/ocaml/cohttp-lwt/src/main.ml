(* serverbench ocaml/cohttp-lwt: cohttp-lwt-unix for HTTP and a plain Lwt_unix TCP echo.
   Lwt runs on one core, so WORKERS processes are forked after the listening sockets are
   bound and each runs its own Lwt loop accepting on the shared sockets. *)

open Lwt.Syntax

let env name default =
  match Sys.getenv_opt name with Some "" | None -> default | Some v -> v

let payload = String.init (1 lsl 20) (fun i -> Char.chr (Char.code 'a' + (i mod 26)))

(* /pingpong: the handler puts a resolver into the worker's mailbox (an Lwt_mvar) and waits
   for the worker to fill it with the payload. *)
let mailbox : string Lwt.u Lwt_mvar.t = Lwt_mvar.create_empty ()

let rec pingpong_worker () =
  let* reply = Lwt_mvar.take mailbox in
  Lwt.wakeup_later reply payload;
  pingpong_worker ()

let pingpong () =
  let answer, reply = Lwt.wait () in
  let* () = Lwt_mvar.put mailbox reply in
  answer

(* cohttp 4.0.0 closes every HTTP/1.0 connection after a [`Response]: [Request.is_keep_alive]
   is false for any HTTP/1.0 request (cohttp/src/request.ml), even one that asks for
   keep-alive as ab -k does. An [`Expert] response keeps the connection open (cohttp-lwt's
   server loop reads the next request after it), so such a request gets one that says
   [Connection: keep-alive]. *)
let http10_keep_alive req =
  Cohttp.Request.version req = `HTTP_1_0
  &&
  match Cohttp.Header.get (Cohttp.Request.headers req) "connection" with
  | Some v -> String.lowercase_ascii (String.trim v) = "keep-alive"
  | None -> false

let respond req ?(status = `OK) content_type body =
  if http10_keep_alive req then
    let headers =
      Cohttp.Header.of_list
        [
          ("content-type", content_type);
          ("content-length", string_of_int (String.length body));
          ("connection", "keep-alive");
        ]
    in
    let res = Cohttp.Response.make ~status ~headers () in
    let write_body _ic oc =
      let* () = Lwt_io.write oc body in
      Lwt_io.flush oc
    in
    Lwt.return (`Expert (res, write_body))
  else
    let headers = Cohttp.Header.init_with "content-type" content_type in
    let+ response = Cohttp_lwt_unix.Server.respond_string ~headers ~status ~body () in
    `Response response

let octets = "application/octet-stream"

(* This process's database pool (see Db), only when DATABASE_URL is set; made after the fork. *)
let db : Db.t option ref = ref None

let database pool req path =
  Lwt.catch
    (fun () ->
      let* content_type, body = Db.answer pool path (Cohttp.Request.uri req) in
      respond req content_type body)
    (fun e ->
      Printf.eprintf "ocaml/cohttp-lwt: database error on %s: %s\n%!" path (Printexc.to_string e);
      respond req ~status:`Internal_server_error "text/plain" "database error")

let callback _conn req _body =
  let respond = respond req in
  match Uri.path (Cohttp.Request.uri req) with
  | "/hello" -> respond "text/plain" "Hello World!"
  | "/hey" -> respond "text/plain" "Hey!"
  | "/hell" -> respond "text/plain" "Hell!"
  | "/about" -> respond "text/html" "<html><body>About page</body></html>"
  | "/json" ->
      respond "application/json"
        (Yojson.Safe.to_string (`Assoc [ ("message", `String "Hello, World!") ]))
  | "/payload" -> respond octets payload
  | "/pingpong" ->
      let* body = pingpong () in
      respond octets body
  | path when List.mem path Db.paths -> (
      match !db with
      | Some pool -> database pool req path
      | None -> respond ~status:`Not_found "text/plain" "Not Found")
  | _ -> respond ~status:`Not_found "text/plain" "Not Found"

(* TCP echo: copy every read back until the peer closes. *)
let echo_client fd =
  let buf = Bytes.create 65536 in
  let rec write_all off len =
    if len = 0 then Lwt.return_unit
    else
      let* n = Lwt_unix.write fd buf off len in
      write_all (off + n) (len - n)
  in
  let rec loop () =
    let* n = Lwt_unix.read fd buf 0 (Bytes.length buf) in
    if n = 0 then Lwt.return_unit
    else
      let* () = write_all 0 n in
      loop ()
  in
  Lwt.finalize
    (fun () -> Lwt.catch loop (fun _ -> Lwt.return_unit))
    (fun () -> Lwt.catch (fun () -> Lwt_unix.close fd) (fun _ -> Lwt.return_unit))

let rec echo_accept listen =
  let* fd, _ = Lwt_unix.accept listen in
  Lwt_unix.setsockopt fd Unix.TCP_NODELAY true;
  Lwt.async (fun () -> echo_client fd);
  echo_accept listen

let listen_on host port =
  let addr = Unix.inet_addr_of_string host in
  let domain = Unix.domain_of_sockaddr (Unix.ADDR_INET (addr, port)) in
  let fd = Lwt_unix.socket domain Unix.SOCK_STREAM 0 in
  Lwt_unix.setsockopt fd Unix.SO_REUSEADDR true;
  Lwt_unix.set_close_on_exec fd;
  let* () = Lwt_unix.bind fd (Unix.ADDR_INET (addr, port)) in
  Lwt_unix.listen fd 1024;
  Lwt.return fd

let serve ~processes http echo =
  Random.self_init ();
  db := Db.pool_of_env ~processes;
  Lwt.async pingpong_worker;
  Lwt.async (fun () -> echo_accept echo);
  Cohttp_lwt_unix.Server.create ~mode:(`TCP (`Socket http))
    (Cohttp_lwt_unix.Server.make_response_action ~callback ())

(* Forks WORKERS - 1 children; the parent forwards SIGTERM to them and exits. *)
let fork_workers n =
  let rec go i children =
    if i >= n then children
    else match Lwt_unix.fork () with 0 -> [] | pid -> go (i + 1) (pid :: children)
  in
  go 1 []

let () =
  let host = env "HOST" "127.0.0.1" in
  let port = int_of_string (env "PORT" "8080") in
  let echo_port = int_of_string (env "ECHO_PORT" "9000") in
  let workers = max 1 (int_of_string (env "WORKERS" "1")) in
  let http, echo = Lwt_main.run (Lwt.both (listen_on host port) (listen_on host echo_port)) in
  Printf.printf "ocaml/cohttp-lwt: http on %s:%d, echo on %s:%d, %d processes\n%!" host port
    host echo_port workers;
  let parent = Unix.getpid () in
  let children = fork_workers workers in
  if Unix.getpid () = parent && children <> [] then
    Sys.set_signal Sys.sigterm
      (Sys.Signal_handle
         (fun _ ->
           List.iter (fun pid -> try Unix.kill pid Sys.sigterm with Unix.Unix_error _ -> ()) children;
           exit 0));
  Lwt_main.run (serve ~processes:workers http echo)

(* HTTP/1.1 on one connection, written as a plain loop that the scheduler suspends whenever
   the socket has nothing to read or no room to write.

   The request head is parsed in place in the connection's buffer (it only allocates the
   path); every complete request of a read is answered, in order, and the answers leave in one
   send (pipelining). A head may arrive a few bytes at a time: the search for its end resumes
   where the last one stopped. A request body announced by Content-Length is skipped. *)

exception Bad_request

(* ---- the output buffer: responses accumulate here until the batch is sent ---- *)

module Out = struct
  type t = { mutable bytes : Bytes.t; mutable len : int }

  let create () = { bytes = Bytes.create 4096; len = 0 }

  let reserve t n =
    if t.len + n > Bytes.length t.bytes then begin
      let bigger = Bytes.create (max (t.len + n) (2 * Bytes.length t.bytes)) in
      Bytes.blit t.bytes 0 bigger 0 t.len;
      t.bytes <- bigger
    end

  let add_string t s =
    let n = String.length s in
    reserve t n;
    Bytes.unsafe_blit_string s 0 t.bytes t.len n;
    t.len <- t.len + n

  let rec add_int t n =
    if n >= 10 then add_int t (n / 10);
    reserve t 1;
    Bytes.unsafe_set t.bytes t.len (Char.unsafe_chr (48 + (n mod 10)));
    t.len <- t.len + 1

  let flush fd t =
    Sched.send_bytes fd t.bytes 0 t.len;
    t.len <- 0
end

(* ---- responses ---- *)

type response = { status : int; content_type : string; body : string }

let status_line = function
  | 200 -> "HTTP/1.1 200 OK\r\n"
  | 400 -> "HTTP/1.1 400 Bad Request\r\n"
  | _ -> "HTTP/1.1 404 Not Found\r\n"

(* Bodies above this size are sent straight from their string rather than copied. *)
let copy_limit = 16384

let respond fd out r ~keep_alive =
  Out.add_string out (status_line r.status);
  Out.add_string out "Server: ocaml-effects\r\nContent-Type: ";
  Out.add_string out r.content_type;
  Out.add_string out "\r\nContent-Length: ";
  Out.add_int out (String.length r.body);
  Out.add_string out
    (if keep_alive then "\r\nConnection: keep-alive\r\n\r\n" else "\r\nConnection: close\r\n\r\n");
  if String.length r.body <= copy_limit then Out.add_string out r.body
  else begin
    Out.flush fd out;
    Sched.send_string fd r.body 0 (String.length r.body)
  end

let bad_request = { status = 400; content_type = "text/plain"; body = "Bad Request" }

(* ---- parsing the head in place ---- *)

let lower c = if c >= 'A' && c <= 'Z' then Char.unsafe_chr (Char.code c + 32) else c

(* buf.[a .. b) equals the lowercase [s], ignoring case. *)
let equal_ci buf a b s =
  b - a = String.length s
  &&
  let rec go i = i = b - a || (lower (Bytes.get buf (a + i)) = s.[i] && go (i + 1)) in
  go 0

let rec index buf c i stop =
  if i >= stop then -1 else if Bytes.get buf i = c then i else index buf c (i + 1) stop

let is_space c = c = ' ' || c = '\t'

let rec skip_spaces buf i stop =
  if i < stop && is_space (Bytes.get buf i) then skip_spaces buf (i + 1) stop else i

let rec trim_end buf a b =
  if b > a && is_space (Bytes.get buf (b - 1)) then trim_end buf a (b - 1) else b

let is_tchar c =
  match c with
  | 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' -> true
  | '!' | '#' | '$' | '%' | '&' | '\'' | '*' | '+' | '-' | '.' | '^' | '_' | '`' | '|' | '~' -> true
  | _ -> false

let rec all p buf a b = a >= b || (p (Bytes.get buf a) && all p buf (a + 1) b)
let is_target_char c = c > ' ' && c < '\127'

(* The request line in buf.[a .. b): returns the path (the target before any '?') and whether
   the version is HTTP/1.1. *)
let request_line buf a b =
  let sp1 = index buf ' ' a b in
  let sp2 = if sp1 < 0 then -1 else index buf ' ' (sp1 + 1) b in
  if sp1 <= a || sp2 <= sp1 + 1 then raise Bad_request;
  if not (all is_tchar buf a sp1 && all is_target_char buf (sp1 + 1) sp2) then raise Bad_request;
  let http11 =
    if equal_ci buf (sp2 + 1) b "http/1.1" then true
    else if equal_ci buf (sp2 + 1) b "http/1.0" then false
    else raise Bad_request
  in
  let q = index buf '?' (sp1 + 1) sp2 in
  let path_end = if q < 0 then sp2 else q in
  (Bytes.sub_string buf (sp1 + 1) (path_end - sp1 - 1), http11)

(* Applies the tokens of a Connection value in buf.[a .. b) to [keep_alive]. *)
let rec connection_tokens buf a b keep_alive =
  if a >= b then keep_alive
  else
    let comma = match index buf ',' a b with -1 -> b | i -> i in
    let t0 = skip_spaces buf a comma and t1 = trim_end buf a comma in
    let keep_alive =
      if equal_ci buf t0 t1 "close" then false
      else if equal_ci buf t0 t1 "keep-alive" then true
      else keep_alive
    in
    connection_tokens buf (comma + 1) b keep_alive

let content_length buf a b =
  if a >= b || b - a > 15 then raise Bad_request;
  let rec go i n =
    if i = b then n
    else
      match Bytes.get buf i with
      | '0' .. '9' as c -> go (i + 1) ((10 * n) + Char.code c - 48)
      | _ -> raise Bad_request
  in
  go a 0

type head = { path : string; keep_alive : bool; body_length : int }

(* Parses buf.[start .. stop + 2), the head up to the CRLF before the blank line. *)
let parse_head buf start stop =
  (* Every line ends with CRLF, the last one at stop - 2: a lone CR is an error. *)
  let line_end i =
    let e = index buf '\r' i stop in
    if Bytes.get buf (e + 1) <> '\n' then raise Bad_request;
    e
  in
  let eol = line_end start in
  let path, http11 = request_line buf start eol in
  let rec headers i keep_alive length =
    if i >= stop then { path; keep_alive; body_length = length }
    else begin
      let e = line_end i in
      let colon = index buf ':' i e in
      if colon <= i || not (all is_tchar buf i colon) then raise Bad_request;
      let v0 = skip_spaces buf (colon + 1) e and v1 = trim_end buf (colon + 1) e in
      let next = e + 2 in
      if equal_ci buf i colon "connection" then
        headers next (connection_tokens buf v0 v1 keep_alive) length
      else if equal_ci buf i colon "content-length" then
        headers next keep_alive (content_length buf v0 v1)
      else headers next keep_alive length
    end
  in
  headers (eol + 2) http11 0

(* ---- the connection ---- *)

let initial_buffer = 16384

(* A head that does not fit in this many bytes is answered 400. *)
let max_buffer = 65536

type conn = {
  fd : int;
  mutable buf : Bytes.t;
  mutable start : int;  (** first byte not consumed yet *)
  mutable stop : int;  (** end of the bytes read *)
  mutable scanned : int;  (** the search for the end of the head resumes here *)
  mutable skip : int;  (** body bytes of the last request still to discard *)
  out : Out.t;
}

(* Index of the "\r\n\r\n" that ends the head starting at c.start, or -1. *)
let head_end c =
  let buf = c.buf and stop = c.stop in
  let rec go i =
    if i + 3 >= stop then begin
      c.scanned <- max c.start (stop - 3);
      -1
    end
    else if Bytes.unsafe_get buf (i + 3) <> '\n' then go (i + 1)
    else if Bytes.unsafe_get buf i = '\r' && Bytes.unsafe_get buf (i + 1) = '\n'
            && Bytes.unsafe_get buf (i + 2) = '\r'
    then i
    else go (i + 1)
  in
  go (max c.start c.scanned)

(* A garbage request line is refused as soon as it is complete, without waiting for a blank
   line that may never come. *)
let check_request_line c =
  match index c.buf '\n' c.start c.stop with
  | -1 -> ()
  | nl ->
      if nl = c.start || Bytes.get c.buf (nl - 1) <> '\r' then raise Bad_request;
      ignore (request_line c.buf c.start (nl - 1) : string * bool)

(* Answers every complete request in the buffer; false when the connection must then close. *)
let rec answer_all c route =
  if c.skip > 0 then begin
    let n = min c.skip (c.stop - c.start) in
    c.start <- c.start + n;
    c.skip <- c.skip - n
  end;
  if c.skip > 0 then true
  else
    match head_end c with
    | -1 ->
        check_request_line c;
        true
    | e ->
        let h = parse_head c.buf c.start (e + 2) in
        respond c.fd c.out (route h.path) ~keep_alive:h.keep_alive;
        c.start <- e + 4;
        c.scanned <- c.start;
        c.skip <- h.body_length;
        h.keep_alive && answer_all c route

(* Makes room at the end of the buffer for the next read. *)
let make_room c =
  if c.start = c.stop then begin
    c.start <- 0;
    c.stop <- 0;
    c.scanned <- 0
  end
  else if c.stop = Bytes.length c.buf then begin
    let len = c.stop - c.start and size = Bytes.length c.buf in
    if len >= max_buffer then raise Bad_request;
    let target = if len > size / 2 && size < max_buffer then Bytes.create (2 * size) else c.buf in
    Bytes.blit c.buf c.start target 0 len;
    c.buf <- target;
    c.scanned <- c.scanned - c.start;
    c.start <- 0;
    c.stop <- len
  end

(* Serves one connection until the peer closes, asks to close, or sends garbage (400, then
   close). [route] maps a path to its response. *)
let serve route fd =
  let buf = Bytes.create initial_buffer in
  let c = { fd; buf; start = 0; stop = 0; scanned = 0; skip = 0; out = Out.create () } in
  (* [drained]: the last read emptied the socket, so wait before reading again. *)
  let rec loop ~drained =
    make_room c;
    if drained then Sched.await_readable fd;
    let room = Bytes.length c.buf - c.stop in
    let n = Sched.recv fd c.buf c.stop room in
    if n > 0 then begin
      c.stop <- c.stop + n;
      let keep_alive = answer_all c route in
      Out.flush fd c.out;
      if keep_alive then loop ~drained:(n < room)
    end
  in
  try loop ~drained:false
  with Bad_request ->
    respond fd c.out bad_request ~keep_alive:false;
    Out.flush fd c.out

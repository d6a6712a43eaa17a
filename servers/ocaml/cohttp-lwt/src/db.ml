(* The database workloads (/db, /queries, /fortunes, /updates) on Debian's postgresql-ocaml
   (libpq bindings), driven by libpq's asynchronous API on the Lwt loop: a query is sent with
   [send_query_prepared] and its answer awaited with [Lwt_unix.wait_read] on the connection's
   socket, so a process serves other requests while PostgreSQL works. Each forked process has
   an [Lwt_pool] of its share of DATABASE_POOL connections, opened on first use. *)

open Lwt.Syntax
module P = Postgresql

let select_world = "SELECT id, randomnumber FROM world WHERE id = $1"
let select_fortunes = "SELECT id, message FROM fortune"
let max_queries = 500

type conn = {
  pg : P.connection;
  fd : Lwt_unix.file_descr;
  updates : (int, unit) Hashtbl.t;  (** the UPDATE shapes prepared on this connection *)
}

(* The next result of the query in flight, [None] once it is complete. *)
let rec next_result c =
  c.pg#consume_input;
  if c.pg#is_busy then
    let* () = Lwt_unix.wait_read c.fd in
    next_result c
  else Lwt.return c.pg#get_result

(* Every result of the query just sent; the last, or the first error once all are read. *)
let finish c =
  let rec drain last error =
    let* r = next_result c in
    match r with
    | None -> (
        match (error, last) with
        | Some e, _ -> Lwt.fail (Failure e)
        | None, Some r -> Lwt.return r
        | None, None -> Lwt.fail (Failure "no result"))
    | Some r -> (
        match r#status with
        | P.Tuples_ok | P.Command_ok -> drain (Some r) error
        | _ -> drain last (if error = None then Some r#error else error))
  in
  drain None None

let exec c name params =
  c.pg#send_query_prepared ~params name;
  finish c

let prepare c name sql =
  c.pg#send_prepare name sql;
  let+ _ = finish c in
  ()

let connect url =
  let pg = new P.connection ~conninfo:url () in
  let fd =
    Lwt_unix.of_unix_file_descr ~blocking:true ~set_flags:false
      (Obj.magic pg#socket : Unix.file_descr)
    (* libpq's socket is an fd; on Unix a Unix.file_descr is that int *)
  in
  let c = { pg; fd; updates = Hashtbl.create 16 } in
  let* () = prepare c "world" select_world in
  let+ () = prepare c "fortunes" select_fortunes in
  c

(* N from [queries]: missing, empty or not a number means 1; clamped to 1..500. *)
let query_count uri =
  match Option.bind (Uri.get_query_param uri "queries") int_of_string_opt with
  | Some n -> max 1 (min max_queries n)
  | None -> 1

let random_id () = 1 + Random.int 10_000

let world c id =
  let+ r = exec c "world" [| string_of_int id |] in
  if r#ntuples <> 1 then failwith (Printf.sprintf "no world row with id %d" id);
  (int_of_string (r#getvalue 0 0), int_of_string (r#getvalue 0 1))

(* N rows, one SELECT each, one after the other on the connection. *)
let worlds c n =
  let rec go i acc =
    if i = 0 then Lwt.return (List.rev acc)
    else
      let* w = world c (random_id ()) in
      go (i - 1) (w :: acc)
  in
  go n []

let json_of_world (id, n) = `Assoc [ ("id", `Int id); ("randomNumber", `Int n) ]
let json_of_worlds ws = Yojson.Safe.to_string (`List (List.map json_of_world ws))

(* [UPDATE world SET randomnumber = v.r FROM (VALUES ($1::int, $2::int), ...) ...] for n rows,
   prepared once per row count on the connection. *)
let update_statement c n =
  let name = Printf.sprintf "update_%d" n in
  if Hashtbl.mem c.updates n then Lwt.return name
  else
    let values =
      List.init n (fun i -> Printf.sprintf "($%d::int, $%d::int)" ((2 * i) + 1) ((2 * i) + 2))
    in
    let sql =
      "UPDATE world SET randomnumber = v.r FROM (VALUES " ^ String.concat ", " values
      ^ ") AS v(id, r) WHERE world.id = v.id"
    in
    let+ () = prepare c name sql in
    Hashtbl.replace c.updates n ();
    name

(* Reads N rows, gives each a new number and writes them back in one batched UPDATE, ids sorted
   (concurrent requests lock rows in the same order) and distinct (a row drawn twice gets one
   new number, shown twice). *)
let update c n =
  let* ws = worlds c n in
  let numbers = Hashtbl.create n in
  List.iter (fun (id, _) -> Hashtbl.replace numbers id (random_id ())) ws;
  let changes = List.sort compare (List.of_seq (Hashtbl.to_seq numbers)) in
  let params =
    Array.of_list (List.concat_map (fun (id, r) -> [ string_of_int id; string_of_int r ]) changes)
  in
  let* name = update_statement c (List.length changes) in
  let+ _ = exec c name params in
  List.map (fun (id, _) -> (id, Hashtbl.find numbers id)) ws

(* The page through TyXML: text nodes are escaped by the library. *)
let render fortunes =
  let open Tyxml.Html in
  let row (id, message) = tr [ td [ txt (string_of_int id) ]; td [ txt message ] ] in
  let page =
    html
      (head (title (txt "Fortunes")) [])
      (body [ table (tr [ th [ txt "id" ]; th [ txt "message" ] ] :: List.map row fortunes) ])
  in
  Format.asprintf "%a" (pp ()) page

let fortunes c =
  let+ r = exec c "fortunes" [||] in
  let rows = List.init r#ntuples (fun i -> (int_of_string (r#getvalue i 0), r#getvalue i 1)) in
  let all = (0, "Additional fortune added at request time.") :: rows in
  (* String.compare is byte order: the contract's UTF-8 order *)
  render (List.sort (fun (_, a) (_, b) -> String.compare a b) all)

type t = conn Lwt_pool.t

(* This process's pool, when DATABASE_URL is set: DATABASE_POOL split between the WORKERS
   processes, at least one connection each. A connection whose socket broke is dropped. *)
let pool_of_env ~processes : t option =
  match Sys.getenv_opt "DATABASE_URL" with
  | None | Some "" -> None
  | Some url ->
      let total =
        Option.value ~default:16
          (Option.bind (Sys.getenv_opt "DATABASE_POOL") int_of_string_opt)
      in
      let size = max 1 (total / processes) in
      let check c ok = ok (c.pg#status = P.Ok) in
      let dispose c = Lwt.return (try c.pg#finish with P.Error _ -> ()) in
      Some (Lwt_pool.create size ~check ~dispose (fun () -> connect url))

let paths = [ "/db"; "/queries"; "/fortunes"; "/updates" ]

(* [(content type, body)] for one of [paths]; a database error fails the promise. *)
let answer pool path uri =
  Lwt_pool.use pool (fun c ->
      match path with
      | "/db" ->
          let+ w = world c (random_id ()) in
          ("application/json", Yojson.Safe.to_string (json_of_world w))
      | "/queries" ->
          let+ ws = worlds c (query_count uri) in
          ("application/json", json_of_worlds ws)
      | "/updates" ->
          let+ ws = update c (query_count uri) in
          ("application/json", json_of_worlds ws)
      | _ ->
          let+ page = fortunes c in
          ("text/html; charset=utf-8", page))

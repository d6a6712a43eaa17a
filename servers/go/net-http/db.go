package main

// The contract's database workloads (db, queries, fortunes, updates) on pgx v5's pgxpool.
// Every statement is prepared: pgx's default exec mode prepares each query text once per
// connection and caches it.

import (
	"context"
	"encoding/json"
	"html/template"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	worldRows     = 10000
	selectWorld   = "SELECT id, randomnumber FROM world WHERE id = $1"
	selectFortune = "SELECT id, message FROM fortune"
)

type world struct {
	ID           int32 `json:"id"`
	RandomNumber int32 `json:"randomNumber"`
}

type fortune struct {
	ID      int32
	Message string
}

var fortunesPage = template.Must(template.New("fortunes").Parse(`<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>{{range .}}<tr><td>{{.ID}}</td><td>{{.Message}}</td></tr>{{end}}</table></body></html>`))

// openPool makes the pool from DATABASE_URL with DATABASE_POOL connections at most, or returns
// nil when DATABASE_URL is unset (the server then serves only the hello-world endpoints).
// pgxpool connects lazily: a database that is down shows as 500s, not as a failed start.
func openPool() *pgxpool.Pool {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return nil
	}
	size, err := strconv.Atoi(envOr("DATABASE_POOL", "16"))
	if err != nil || size < 1 {
		log.Fatalf("go/net-http: DATABASE_POOL=%q is not a positive number", os.Getenv("DATABASE_POOL"))
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		log.Fatalf("go/net-http: DATABASE_URL: %v", err)
	}
	cfg.MaxConns = int32(size)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		log.Fatalf("go/net-http: DATABASE_URL: %v", err)
	}
	return pool
}

func randomID() int32 { return int32(rand.IntN(worldRows) + 1) }

// queryCount reads the queries parameter: missing, empty or not a number means 1; clamped to 1..500.
func queryCount(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("queries"))
	switch {
	case err != nil || n < 1:
		return 1
	case n > 500:
		return 500
	}
	return n
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

func dbError(w http.ResponseWriter, err error) {
	log.Printf("go/net-http: database: %v", err)
	http.Error(w, "database error", http.StatusInternalServerError)
}

// readWorlds reads n random rows, one SELECT each, on one connection of the pool.
func readWorlds(ctx context.Context, pool *pgxpool.Pool, n int) ([]world, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	rows := make([]world, n)
	for i := range rows {
		if err := conn.QueryRow(ctx, selectWorld, randomID()).Scan(&rows[i].ID, &rows[i].RandomNumber); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// updateSQL is the batched UPDATE for n distinct ids: ($1, $2), ($3, $4)... as (id, number).
func updateSQL(n int) string {
	var b strings.Builder
	b.WriteString("UPDATE world SET randomnumber = v.r FROM (VALUES ")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("($" + strconv.Itoa(2*i+1) + "::integer, $" + strconv.Itoa(2*i+2) + "::integer)")
	}
	b.WriteString(") AS v(id, r) WHERE world.id = v.id")
	return b.String()
}

// writeWorlds gives every row a new number and writes them in one UPDATE. An id read twice gets
// one number (the last), so the rows returned match the table; ids are sorted so concurrent
// requests lock rows in the same order and cannot deadlock.
func writeWorlds(ctx context.Context, pool *pgxpool.Pool, rows []world) error {
	latest := make(map[int32]int32, len(rows))
	for i := range rows {
		latest[rows[i].ID] = randomID()
	}
	ids := make([]int32, 0, len(latest))
	for id := range latest {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	args := make([]any, 0, 2*len(ids))
	for _, id := range ids {
		args = append(args, id, latest[id])
	}
	for i := range rows {
		rows[i].RandomNumber = latest[rows[i].ID]
	}
	_, err := pool.Exec(ctx, updateSQL(len(ids)), args...)
	return err
}

// addDatabaseRoutes adds /db, /queries, /fortunes and /updates to the mux.
func addDatabaseRoutes(mux *http.ServeMux, pool *pgxpool.Pool) {
	mux.HandleFunc("/db", func(w http.ResponseWriter, r *http.Request) {
		rows, err := readWorlds(r.Context(), pool, 1)
		if err != nil {
			dbError(w, err)
			return
		}
		writeJSON(w, rows[0])
	})
	mux.HandleFunc("/queries", func(w http.ResponseWriter, r *http.Request) {
		rows, err := readWorlds(r.Context(), pool, queryCount(r))
		if err != nil {
			dbError(w, err)
			return
		}
		writeJSON(w, rows)
	})
	mux.HandleFunc("/updates", func(w http.ResponseWriter, r *http.Request) {
		rows, err := readWorlds(r.Context(), pool, queryCount(r))
		if err == nil {
			err = writeWorlds(r.Context(), pool, rows)
		}
		if err != nil {
			dbError(w, err)
			return
		}
		writeJSON(w, rows)
	})
	mux.HandleFunc("/fortunes", func(w http.ResponseWriter, r *http.Request) {
		fortunes, err := readFortunes(r.Context(), pool)
		if err != nil {
			dbError(w, err)
			return
		}
		fortunes = append(fortunes, fortune{ID: 0, Message: "Additional fortune added at request time."})
		sort.Slice(fortunes, func(i, j int) bool { return fortunes[i].Message < fortunes[j].Message })
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := fortunesPage.Execute(w, fortunes); err != nil {
			log.Printf("go/net-http: fortunes template: %v", err)
		}
	})
}

func readFortunes(ctx context.Context, pool *pgxpool.Pool) ([]fortune, error) {
	rows, err := pool.Query(ctx, selectFortune)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fortunes := make([]fortune, 0, 16)
	for rows.Next() {
		var f fortune
		if err := rows.Scan(&f.ID, &f.Message); err != nil {
			return nil, err
		}
		fortunes = append(fortunes, f)
	}
	return fortunes, rows.Err()
}

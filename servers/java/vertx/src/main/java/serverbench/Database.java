package serverbench;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.PreparedQuery;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The database workloads (/db, /queries, /fortunes, /updates) on Vert.x's reactive PostgreSQL
 * client: one pool of DATABASE_POOL connections shared by every HTTP verticle, prepared
 * statements cached per connection, the N reads of a request pipelined on one connection (each
 * query its own Bind/Execute/Sync), /fortunes through a Mustache template.
 */
final class Database {
    private static final String SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = $1";
    private static final String SELECT_FORTUNES = "SELECT id, message FROM fortune";
    private static final int MAX_QUERIES = 500;
    private static final CharSequence JSON = HttpHeaders.createOptimized("application/json");
    private static final CharSequence HTML =
            HttpHeaders.createOptimized("text/html; charset=utf-8");
    private static final CharSequence TEXT = HttpHeaders.createOptimized("text/plain");
    private static final Mustache FORTUNES =
            new DefaultMustacheFactory().compile("fortunes.mustache");
    private static final String[] UPDATE_SQL = new String[MAX_QUERIES + 1];

    /** The connection settings and pool size, from DATABASE_URL and DATABASE_POOL. */
    record Config(PgConnectOptions connect, int poolSize, int eventLoops) {
        /** The settings when DATABASE_URL is set, else null (the server then has no database). */
        static Config fromEnv(int eventLoops) {
            String url = System.getenv("DATABASE_URL");
            if (url == null || url.isEmpty()) {
                return null;
            }
            String pool = System.getenv("DATABASE_POOL");
            int size = pool == null || pool.isEmpty() ? 16 : Math.max(1, Integer.parseInt(pool));
            PgConnectOptions connect = PgConnectOptions.fromUri(url)
                    .setCachePreparedStatements(true)
                    .setPreparedStatementCacheMaxSize(MAX_QUERIES + 16);
            return new Config(connect, size, eventLoops);
        }
    }

    /** A row of `world`. */
    record World(int id, int randomNumber) {
        JsonObject toJson() {
            return new JsonObject().put("id", id).put("randomNumber", randomNumber);
        }
    }

    /** A row of `fortune`; public for the template's reflection. */
    public record Fortune(int id, String message) {}

    private final Pool pool;

    /** Builds (or joins, from the second verticle on) the shared pool. */
    Database(Vertx vertx, Config config) {
        this.pool = PgBuilder.pool()
                .with(new PoolOptions()
                        .setMaxSize(config.poolSize())
                        .setShared(true)
                        .setName("serverbench-pg")
                        .setEventLoopSize(config.eventLoops()))
                .connectingTo(config.connect())
                .using(vertx)
                .build();
    }

    void handle(HttpServerRequest req) {
        Future<Buffer> body = switch (req.path()) {
            case "/db" -> pool.preparedQuery(SELECT_WORLD).execute(Tuple.of(randomId()))
                    .map(rows -> world(rows.iterator().next()).toJson().toBuffer());
            case "/queries" -> pool.withConnection(conn -> readWorlds(conn, count(req)))
                    .map(Database::toJson);
            case "/updates" -> pool.withConnection(conn -> update(conn, count(req)))
                    .map(Database::toJson);
            default -> pool.preparedQuery(SELECT_FORTUNES).execute().map(Database::fortunes);
        };
        CharSequence type = req.path().equals("/fortunes") ? HTML : JSON;
        body.onSuccess(buffer -> HttpVerticle.send(req, 200, type, buffer))
                .onFailure(err -> {
                    System.err.println("vertx: database error on " + req.path() + ": " + err);
                    HttpVerticle.send(req, 500, TEXT, Buffer.buffer("database error"));
                });
    }

    /** N from `queries`: missing, empty or not a number means 1; clamped to 1..500. */
    static int count(String raw) {
        if (raw == null) {
            return 1;
        }
        try {
            return (int) Math.max(1, Math.min(MAX_QUERIES, Long.parseLong(raw)));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    private static int count(HttpServerRequest req) {
        return count(req.getParam("queries"));
    }

    private static int randomId() {
        return 1 + ThreadLocalRandom.current().nextInt(10_000);
    }

    private static World world(Row row) {
        return new World(row.getInteger(0), row.getInteger(1));
    }

    /** N rows, one SELECT each, sent without waiting for the answers (pipelined). */
    private static Future<List<World>> readWorlds(SqlConnection conn, int n) {
        PreparedQuery<RowSet<Row>> query = conn.preparedQuery(SELECT_WORLD);
        List<Future<RowSet<Row>>> reads = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            reads.add(query.execute(Tuple.of(randomId())));
        }
        return Future.all(reads).map(done -> {
            List<World> worlds = new ArrayList<>(n);
            for (Future<RowSet<Row>> read : reads) {
                worlds.add(world(read.result().iterator().next()));
            }
            return worlds;
        });
    }

    /**
     * Reads N rows, gives each a new number and writes them back in one batched UPDATE, ids
     * sorted (concurrent requests lock rows in the same order) and distinct (a row drawn twice
     * gets one new number, shown twice).
     */
    private static Future<List<World>> update(SqlConnection conn, int n) {
        return readWorlds(conn, n).compose(worlds -> {
            TreeMap<Integer, Integer> changes = new TreeMap<>();
            for (World w : worlds) {
                changes.put(w.id(), randomId());
            }
            List<World> updated = new ArrayList<>(n);
            for (World w : worlds) {
                updated.add(new World(w.id(), changes.get(w.id())));
            }
            Tuple params = Tuple.tuple();
            changes.forEach((id, number) -> params.addInteger(id).addInteger(number));
            return conn.preparedQuery(updateSql(changes.size())).execute(params).map(updated);
        });
    }

    /** `UPDATE world SET randomnumber = v.r FROM (VALUES ($1::int, $2::int), ...) ...`. */
    static String updateSql(int n) {
        String sql = UPDATE_SQL[n];
        if (sql == null) {
            StringBuilder b = new StringBuilder("UPDATE world SET randomnumber = v.r FROM (VALUES ");
            for (int i = 0; i < n; i++) {
                b.append(i == 0 ? "" : ", ")
                        .append("($").append(2 * i + 1).append("::int, $").append(2 * i + 2)
                        .append("::int)");
            }
            sql = b.append(") AS v(id, r) WHERE world.id = v.id").toString();
            UPDATE_SQL[n] = sql; // a benign race: every thread builds the same string
        }
        return sql;
    }

    private static Buffer toJson(List<World> worlds) {
        JsonArray array = new JsonArray(new ArrayList<>(worlds.size()));
        for (World w : worlds) {
            array.add(w.toJson());
        }
        return array.toBuffer();
    }

    /** Every fortune plus the one added at request time, sorted by message, rendered. */
    private static Buffer fortunes(RowSet<Row> rows) {
        List<Fortune> fortunes = new ArrayList<>(rows.size() + 1);
        for (Row row : rows) {
            fortunes.add(new Fortune(row.getInteger(0), row.getString(1)));
        }
        fortunes.add(new Fortune(0, "Additional fortune added at request time."));
        fortunes.sort((a, b) -> compareCodePoints(a.message(), b.message()));
        StringWriter out = new StringWriter(2048);
        FORTUNES.execute(out, Map.of("fortunes", fortunes));
        return Buffer.buffer(out.toString());
    }

    /** Code point order (the UTF-8 byte order the contract sorts by; String.compareTo is UTF-16's). */
    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }
}

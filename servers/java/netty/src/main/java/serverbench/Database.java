package serverbench;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The database workloads (/db, /queries, /fortunes, /updates) on JDBC: the PostgreSQL JDBC
 * driver behind a HikariCP pool of DATABASE_POOL connections. Blocking: the caller's thread
 * waits on the database. Every statement is a PreparedStatement, server-prepared from its first
 * use (prepareThreshold=1) and cached per connection by the driver.
 */
final class Database {
    private static final String SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = ?";
    private static final String SELECT_FORTUNES = "SELECT id, message FROM fortune";
    private static final String UPDATE_WORLD = "UPDATE world SET randomnumber = ? WHERE id = ?";
    private static final int MAX_QUERIES = 500;

    /** What a database path answers. */
    record Answer(int status, String type, byte[] body) {}

    /** A row of `world`. */
    record World(int id, int randomNumber) {
        void appendJson(StringBuilder out) {
            out.append("{\"id\":").append(id).append(",\"randomNumber\":").append(randomNumber)
                    .append('}');
        }
    }

    /** A row of `fortune`; public for the template's reflection. */
    public record Fortune(int id, String message) {}

    private final HikariDataSource pool;
    private final String name;
    private final Mustache template = new DefaultMustacheFactory().compile("fortunes.mustache");

    private Database(HikariDataSource pool, String name) {
        this.pool = pool;
        this.name = name;
    }

    /** The pool when DATABASE_URL is set (from its parts, DATABASE_HOST...), else null. */
    static Database fromEnv(String name) {
        String url = System.getenv("DATABASE_URL");
        if (url == null || url.isEmpty()) {
            return null;
        }
        String pool = System.getenv("DATABASE_POOL");
        int size = pool == null || pool.isEmpty() ? 16 : Math.max(1, Integer.parseInt(pool));
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://" + System.getenv("DATABASE_HOST") + ":"
                + System.getenv("DATABASE_PORT") + "/" + System.getenv("DATABASE_NAME"));
        config.setUsername(System.getenv("DATABASE_USER"));
        config.setPassword(System.getenv("DATABASE_PASSWORD"));
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setAutoCommit(true);
        config.addDataSourceProperty("prepareThreshold", "1");
        config.setPoolName(name);
        System.out.printf("%s: database pool of %d connections (HikariCP)%n", name, size);
        return new Database(new HikariDataSource(config), name);
    }

    int size() {
        return pool.getMaximumPoolSize();
    }

    /** True for the four database paths. */
    static boolean handles(String path) {
        return switch (path) {
            case "/db", "/queries", "/fortunes", "/updates" -> true;
            default -> false;
        };
    }

    /** Answers one of the four paths; a database error is a 500, logged. */
    Answer answer(String path, String rawQuery) {
        try {
            return switch (path) {
                case "/db" -> json(List.of(world()), false);
                case "/queries" -> json(queries(count(rawQuery)), true);
                case "/updates" -> json(updates(count(rawQuery)), true);
                default -> new Answer(200, "text/html; charset=utf-8", fortunes());
            };
        } catch (SQLException | RuntimeException e) {
            System.err.println(name + ": database error on " + path + ": " + e);
            return new Answer(500, "text/plain", bytes("database error"));
        }
    }

    /** N from the raw query string's `queries`: missing, empty or not a number is 1; 1..500. */
    static int count(String rawQuery) {
        if (rawQuery == null) {
            return 1;
        }
        for (String pair : rawQuery.split("&")) {
            if (pair.startsWith("queries=")) {
                try {
                    long n = Long.parseLong(pair.substring("queries=".length()));
                    return (int) Math.max(1, Math.min(MAX_QUERIES, n));
                } catch (NumberFormatException e) {
                    return 1;
                }
            }
        }
        return 1;
    }

    private static int randomId() {
        return 1 + ThreadLocalRandom.current().nextInt(10_000);
    }

    private World world() throws SQLException {
        try (Connection conn = pool.getConnection();
                PreparedStatement select = conn.prepareStatement(SELECT_WORLD)) {
            return read(select, randomId());
        }
    }

    private static World read(PreparedStatement select, int id) throws SQLException {
        select.setInt(1, id);
        try (ResultSet rs = select.executeQuery()) {
            if (!rs.next()) {
                throw new SQLException("no world row with id " + id);
            }
            return new World(rs.getInt(1), rs.getInt(2));
        }
    }

    /** N rows, one SELECT each, one after the other on one connection. */
    private List<World> queries(int n) throws SQLException {
        try (Connection conn = pool.getConnection();
                PreparedStatement select = conn.prepareStatement(SELECT_WORLD)) {
            List<World> worlds = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                worlds.add(read(select, randomId()));
            }
            return worlds;
        }
    }

    /**
     * Reads N rows one SELECT each, then writes the new numbers with one UPDATE per row sent as
     * one JDBC batch (one round trip), ids sorted (concurrent batches lock rows in the same
     * order) and distinct (a row drawn twice gets one new number, shown twice).
     */
    private List<World> updates(int n) throws SQLException {
        try (Connection conn = pool.getConnection();
                PreparedStatement select = conn.prepareStatement(SELECT_WORLD);
                PreparedStatement update = conn.prepareStatement(UPDATE_WORLD)) {
            List<World> read = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                read.add(read(select, randomId()));
            }
            TreeMap<Integer, Integer> changes = new TreeMap<>();
            for (World w : read) {
                changes.put(w.id(), randomId());
            }
            for (Map.Entry<Integer, Integer> change : changes.entrySet()) {
                update.setInt(1, change.getValue());
                update.setInt(2, change.getKey());
                update.addBatch();
            }
            update.executeBatch();
            List<World> updated = new ArrayList<>(n);
            for (World w : read) {
                updated.add(new World(w.id(), changes.get(w.id())));
            }
            return updated;
        }
    }

    /** Every fortune plus the one added at request time, sorted by message, rendered. */
    private byte[] fortunes() throws SQLException {
        List<Fortune> fortunes = new ArrayList<>(16);
        try (Connection conn = pool.getConnection();
                PreparedStatement select = conn.prepareStatement(SELECT_FORTUNES);
                ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
                fortunes.add(new Fortune(rs.getInt(1), rs.getString(2)));
            }
        }
        fortunes.add(new Fortune(0, "Additional fortune added at request time."));
        fortunes.sort((a, b) -> compareCodePoints(a.message(), b.message()));
        StringWriter out = new StringWriter(2048);
        template.execute(out, Map.of("fortunes", fortunes));
        return bytes(out.toString());
    }

    private static Answer json(List<World> worlds, boolean array) {
        StringBuilder out = new StringBuilder(32 * worlds.size() + 2);
        if (array) {
            out.append('[');
        }
        for (int i = 0; i < worlds.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            worlds.get(i).appendJson(out);
        }
        if (array) {
            out.append(']');
        }
        return new Answer(200, "application/json", bytes(out.toString()));
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

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}

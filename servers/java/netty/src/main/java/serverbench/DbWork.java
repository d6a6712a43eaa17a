package serverbench;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The database routes' blocking JDBC work, off the event loops: a fixed pool of DATABASE_POOL
 * platform threads (one per connection) runs {@link Database#answer}, and the answer goes back
 * to the channel's event loop.
 */
final class DbWork {
    /** Set once in {@link Main} before any port opens; null without DATABASE_URL. */
    static DbWork instance;

    private final Database db;
    private final ExecutorService threads;

    private DbWork(Database db) {
        this.db = db;
        this.threads = Executors.newFixedThreadPool(db.size(), r -> {
            Thread t = new Thread(r, "jdbc");
            t.setDaemon(true);
            return t;
        });
    }

    /** Opens the pool when DATABASE_URL is set. */
    static void init() {
        Database db = Database.fromEnv("netty");
        if (db != null) {
            instance = new DbWork(db);
        }
    }

    /** Answers path on a JDBC thread, then hands the answer to {@code then} on {@code loop}. */
    void submit(String path, String rawQuery, Executor loop, Consumer<Database.Answer> then) {
        threads.execute(() -> {
            Database.Answer answer = db.answer(path, rawQuery);
            loop.execute(() -> then.accept(answer));
        });
    }
}

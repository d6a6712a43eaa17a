package serverbench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The serverbench contract on the JDK's built-in com.sun.net.httpserver, one virtual thread per
 * exchange and per echo connection (JDK 21+). WORKERS sets the carrier-thread parallelism through
 * -Djdk.virtualThreadScheduler.parallelism in the run command.
 */
public final class Main {
    private static final byte[] HELLO = bytes("Hello World!");
    private static final byte[] HEY = bytes("Hey!");
    private static final byte[] HELL = bytes("Hell!");
    private static final byte[] ABOUT = bytes("<html><body>About page</body></html>");
    private static final byte[] NOT_FOUND = bytes("Not Found");
    private static final byte[] PAYLOAD = payload();

    /** A ping-pong request: the worker completes the future with the body to send. */
    private record Ping(CompletableFuture<byte[]> reply) {}

    private static final BlockingQueue<Ping> PINGS = new ArrayBlockingQueue<>(1024);

    /** The database pool, only when DATABASE_URL is set. */
    private static Database db;

    /** The JSON message; serialized on every request. */
    record Message(String message) {
        String toJson() {
            return "{\"message\":\"" + escape(message) + "\"}";
        }
    }

    public static void main(String[] args) throws IOException {
        String host = env("HOST", "127.0.0.1");
        int port = Integer.parseInt(env("PORT", "8080"));
        int echoPort = Integer.parseInt(env("ECHO_PORT", "9000"));
        // JDBC blocks the exchange's virtual thread, which unmounts from its carrier meanwhile.
        db = Database.fromEnv("jdk-httpserver-vthreads");
        String carriers = System.getProperty("jdk.virtualThreadScheduler.parallelism", "default");

        startPingPongWorker();
        startEcho(host, echoPort);

        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 1024);
        server.createContext("/", Main::handle);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.start();
        System.out.printf(
                "jdk-httpserver-vthreads: http on %s:%d, echo on %d, %s carriers, JDK %s%n",
                host, port, echoPort, carriers, Runtime.version());
        System.out.flush();
    }

    private static void handle(HttpExchange ex) throws IOException {
        // baseline, upload, /json compressed when asked (Shapes.java): before the body is read.
        if (Shapes.handle(ex)) {
            return;
        }
        try (ex) {
            ex.getRequestBody().readAllBytes();
            switch (ex.getRequestURI().getPath()) {
                case "/hello" -> send(ex, 200, "text/plain", HELLO);
                case "/hey" -> send(ex, 200, "text/plain", HEY);
                case "/hell" -> send(ex, 200, "text/plain", HELL);
                case "/about" -> send(ex, 200, "text/html", ABOUT);
                case "/json" -> send(ex, 200, "application/json",
                        bytes(new Message("Hello, World!").toJson()));
                case "/payload" -> send(ex, 200, "application/octet-stream", PAYLOAD);
                case "/pingpong" -> send(ex, 200, "application/octet-stream", pingPong());
                case "/db", "/queries", "/fortunes", "/updates" -> {
                    if (db == null) {
                        send(ex, 404, "text/plain", NOT_FOUND);
                    } else {
                        Database.Answer a = db.answer(ex.getRequestURI().getPath(),
                                ex.getRequestURI().getRawQuery());
                        send(ex, a.status(), a.type(), a.body());
                    }
                }
                default -> send(ex, 404, "text/plain", NOT_FOUND);
            }
        }
    }

    private static void send(HttpExchange ex, int status, String type, byte[] body)
            throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    /** Hands the request to the worker thread through a queue and waits for its answer. */
    private static byte[] pingPong() throws IOException {
        Ping ping = new Ping(new CompletableFuture<>());
        try {
            PINGS.put(ping);
            return ping.reply().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the ping-pong worker", e);
        } catch (ExecutionException e) {
            throw new IOException("ping-pong worker failed", e);
        }
    }

    private static void startPingPongWorker() {
        Thread worker = new Thread(() -> {
            try {
                while (true) {
                    PINGS.take().reply().complete(PAYLOAD);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "pingpong-worker");
        worker.setDaemon(true);
        worker.start();
    }

    /** TCP echo on plain blocking sockets, one virtual thread per connection. */
    private static void startEcho(String host, int port) throws IOException {
        ServerSocket listener = new ServerSocket();
        listener.setReuseAddress(true);
        listener.bind(new InetSocketAddress(host, port), 1024);
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
        Thread acceptor = new Thread(() -> {
            while (true) {
                try {
                    Socket socket = listener.accept();
                    pool.execute(() -> echo(socket));
                } catch (IOException e) {
                    System.err.println("echo accept failed: " + e.getMessage());
                }
            }
        }, "echo-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private static void echo(Socket socket) {
        try (socket; InputStream in = socket.getInputStream();
                OutputStream out = socket.getOutputStream()) {
            socket.setTcpNoDelay(true);
            byte[] buf = new byte[64 * 1024];
            for (int n; (n = in.read(buf)) != -1; ) {
                out.write(buf, 0, n);
            }
        } catch (IOException e) {
            // peer reset: nothing to do, the socket is closed by try-with-resources
        }
    }

    private static byte[] payload() {
        byte[] body = new byte[1 << 20];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) ('a' + i % 26);
        }
        return body;
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 8);
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.toString();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    private Main() {}
}

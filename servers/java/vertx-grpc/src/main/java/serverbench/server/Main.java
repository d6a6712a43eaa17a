package serverbench.server;

import com.google.protobuf.ByteString;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Timer;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;
import io.vertx.grpc.server.GrpcProtocol;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerOptions;
import io.vertx.grpc.server.GrpcServerRequest;
import io.vertx.grpc.server.GrpcServerResponse;
import java.util.Arrays;
import java.util.List;
import serverbench.Serverbench.Chunk;
import serverbench.Serverbench.Count;
import serverbench.Serverbench.Payload;
import serverbench.Serverbench.SumReply;
import serverbench.Serverbench.SumRequest;

/**
 * java/vertx-grpc: the serverbench.Bench service (spec/serverbench.proto) on Vert.x 5's gRPC
 * server, h2c on PORT and, when TLS_PORT is set, TLS with ALPN h2 there. WORKERS verticle
 * instances, each with its own GrpcServer mounted on an HttpServer per port (Vert.x shares the
 * listening socket among the instances and gives each its event loop).
 *
 * <p>Vert.x's gRPC server needs no generated service stubs: each method is a {@link
 * ServiceMethod} of protoc's message classes, the way the Vert.x gRPC documentation declares a
 * service by hand.
 */
public final class Main {
  private Main() {}

  static final ServiceName BENCH = ServiceName.create("serverbench", "Bench");

  static final ServiceMethod<SumRequest, SumReply> SUM =
      ServiceMethod.server(
          BENCH,
          "Sum",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(SumRequest.newBuilder()));
  static final ServiceMethod<Payload, Payload> ECHO =
      ServiceMethod.server(
          BENCH,
          "Echo",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(Payload.newBuilder()));
  static final ServiceMethod<Count, Chunk> SERVER_STREAM =
      ServiceMethod.server(
          BENCH,
          "ServerStream",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(Count.newBuilder()));
  static final ServiceMethod<Chunk, Chunk> BIDI_ECHO =
      ServiceMethod.server(
          BENCH,
          "BidiEcho",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(Chunk.newBuilder()));
  static final ServiceMethod<Chunk, Count> CLIENT_STREAM =
      ServiceMethod.server(
          BENCH,
          "ClientStream",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(Chunk.newBuilder()));

  /** The contract's receive limit: every gRPC library's default (Vert.x's own is 256 KiB). */
  static final long MAX_MESSAGE_SIZE = 4L * 1024 * 1024;

  static Chunk chunk(int i, int size) {
    byte[] data = new byte[Math.max(size, 0)];
    Arrays.fill(data, (byte) i);
    return Chunk.newBuilder().setSeq(i).setData(ByteString.copyFrom(data)).build();
  }

  /** One event loop's servers: a GrpcServer with the service, behind h2c and TLS listeners. */
  static final class BenchVerticle extends VerticleBase {
    @Override
    public Future<?> start() {
      GrpcServer grpc =
          GrpcServer.server(
              vertx,
              new GrpcServerOptions()
                  .removeEnabledProtocol(GrpcProtocol.WEB)
                  .removeEnabledProtocol(GrpcProtocol.WEB_TEXT)
                  .removeEnabledProtocol(GrpcProtocol.TRANSCODING)
                  .setMaxMessageSize(MAX_MESSAGE_SIZE)
                  .setScheduleDeadlineAutomatically(true));
      grpc.callHandler(SUM, req -> req.handler(m -> req.response().end(sum(m))));
      grpc.callHandler(ECHO, req -> req.handler(m -> req.response().end(m)));
      grpc.callHandler(SERVER_STREAM, req -> req.handler(m -> serverStream(req, m)));
      grpc.callHandler(BIDI_ECHO, req -> req.response().send(req));
      grpc.callHandler(CLIENT_STREAM, Main::clientStream);

      String host = env("HOST", "127.0.0.1");
      Future<?> plain =
          vertx
              .createHttpServer(new HttpServerOptions().setHost(host).setPort(intEnv("PORT", 8080)))
              .requestHandler(req -> onlyHttp2(req, grpc))
              .listen();
      String tlsPort = env("TLS_PORT", "");
      if (tlsPort.isEmpty()) {
        return plain;
      }
      HttpServerOptions tls =
          new HttpServerOptions()
              .setHost(host)
              .setPort(Integer.parseInt(tlsPort))
              .setSsl(true)
              .setUseAlpn(true)
              .setAlpnVersions(List.of(HttpVersion.HTTP_2))
              .setKeyCertOptions(
                  new PemKeyCertOptions()
                      .setCertPath(env("TLS_CERT", "cert.pem"))
                      .setKeyPath(env("TLS_KEY", "key.pem")));
      Future<?> secure =
          vertx.createHttpServer(tls).requestHandler(req -> onlyHttp2(req, grpc)).listen();
      return Future.all(plain, secure);
    }
  }

  /**
   * gRPC is HTTP/2 alone: the Vert.x HttpServer on PORT also speaks HTTP/1.1, which is refused
   * here (505) before it reaches the gRPC server.
   */
  static void onlyHttp2(HttpServerRequest req, GrpcServer grpc) {
    if (req.version() != HttpVersion.HTTP_2) {
      req.response().setStatusCode(505).end();
      return;
    }
    grpc.handle(req);
  }

  static SumReply sum(SumRequest m) {
    return SumReply.newBuilder().setResult(m.getA() + m.getB()).build();
  }

  /** n chunks, written while the stream's write queue has room, then on each drain. */
  static void serverStream(GrpcServerRequest<Count, Chunk> req, Count m) {
    GrpcServerResponse<Count, Chunk> out = req.response();
    if (m.getDelayMs() > 0) {
      slow(req, m);
      return;
    }
    int[] next = {0};
    Runnable pump =
        new Runnable() {
          @Override
          public void run() {
            while (next[0] < m.getN() && !out.writeQueueFull()) {
              out.write(chunk(next[0], m.getSize()));
              next[0]++;
            }
            if (next[0] >= m.getN()) {
              out.end();
            } else {
              out.drainHandler(v -> run());
            }
          }
        };
    pump.run();
  }

  /**
   * The slow call: chunk i after delay_ms on a Vert.x timer. The gRPC server ends the call with
   * 4 DEADLINE_EXCEEDED when its grpc-timeout passes (setScheduleDeadlineAutomatically): the
   * call's deadline timer then cancels the pending chunk's, as does a call the client resets.
   */
  static void slow(GrpcServerRequest<Count, Chunk> req, Count m) {
    Vertx vertx = Vertx.currentContext().owner();
    GrpcServerResponse<Count, Chunk> out = req.response();
    long[] timer = {-1};
    Runnable stop = () -> vertx.cancelTimer(timer[0]);
    Timer deadline = req.deadline();
    if (deadline != null) {
      deadline.onComplete(v -> stop.run());
    }
    req.exceptionHandler(err -> stop.run());
    Handler<Integer> next =
        new Handler<>() {
          @Override
          public void handle(Integer i) {
            timer[0] =
                vertx.setTimer(
                    m.getDelayMs(),
                    id -> {
                      if (i >= m.getN()) {
                        out.end();
                        return;
                      }
                      out.write(chunk(i, m.getSize()));
                      handle(i + 1);
                    });
          }
        };
    next.handle(0);
  }

  /** Counts the chunks and their bytes, and answers once the client has ended its side. */
  static void clientStream(GrpcServerRequest<Chunk, Count> req) {
    int[] n = {0};
    int[] size = {0};
    req.handler(
        c -> {
          n[0]++;
          size[0] += c.getData().size();
        });
    req.endHandler(
        v -> req.response().end(Count.newBuilder().setN(n[0]).setSize(size[0]).build()));
  }

  static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? fallback : v;
  }

  static int intEnv(String name, int fallback) {
    return Integer.parseInt(env(name, Integer.toString(fallback)));
  }

  public static void main(String[] args) {
    int workers = Math.max(1, intEnv("WORKERS", 1));
    Vertx vertx =
        Vertx.vertx(
            new VertxOptions().setEventLoopPoolSize(workers).setPreferNativeTransport(true));
    vertx
        .deployVerticle(BenchVerticle::new, new DeploymentOptions().setInstances(workers))
        .onFailure(
            err -> {
              System.err.println("java/vertx-grpc: cannot start: " + err);
              System.exit(1);
            });
  }
}

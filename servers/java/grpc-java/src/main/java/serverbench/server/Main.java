package serverbench.server;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.File;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import serverbench.BenchGrpc;
import serverbench.Serverbench.Chunk;
import serverbench.Serverbench.Count;
import serverbench.Serverbench.Payload;
import serverbench.Serverbench.SumReply;
import serverbench.Serverbench.SumRequest;

/**
 * java/grpc-java: the serverbench.Bench service (spec/serverbench.proto) on grpc-java with its
 * Netty transport, h2c on PORT and, when TLS_PORT is set, TLS with ALPN h2 there.
 */
public final class Main {
  private Main() {}

  /** Timers of the slow call (ServerStream with delay_ms): no handler thread ever sleeps. */
  private static final ScheduledExecutorService TIMERS =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "slow-call-timer");
            t.setDaemon(true);
            return t;
          });

  static Chunk chunk(int i, int size) {
    byte[] data = new byte[Math.max(size, 0)];
    java.util.Arrays.fill(data, (byte) i);
    return Chunk.newBuilder().setSeq(i).setData(ByteString.copyFrom(data)).build();
  }

  static final class Bench extends BenchGrpc.BenchImplBase {
    @Override
    public void sum(SumRequest req, StreamObserver<SumReply> out) {
      out.onNext(SumReply.newBuilder().setResult(req.getA() + req.getB()).build());
      out.onCompleted();
    }

    @Override
    public void echo(Payload req, StreamObserver<Payload> out) {
      out.onNext(req);
      out.onCompleted();
    }

    @Override
    public void serverStream(Count req, StreamObserver<Chunk> out) {
      if (req.getDelayMs() > 0) {
        slow(req, (ServerCallStreamObserver<Chunk>) out, 0);
        return;
      }
      for (int i = 0; i < req.getN(); i++) {
        out.onNext(chunk(i, req.getSize()));
      }
      out.onCompleted();
    }

    /** Chunk i after delay_ms; a call past its deadline is cancelled by grpc-java, and stops. */
    private static void slow(Count req, ServerCallStreamObserver<Chunk> out, int i) {
      TIMERS.schedule(
          () -> {
            if (out.isCancelled()) {
              return;
            }
            if (i >= req.getN()) {
              out.onCompleted();
              return;
            }
            out.onNext(chunk(i, req.getSize()));
            slow(req, out, i + 1);
          },
          req.getDelayMs(),
          TimeUnit.MILLISECONDS);
    }

    /** Counts every chunk; answers once, when the client ends its side (onCompleted). */
    @Override
    public StreamObserver<Chunk> clientStream(StreamObserver<Count> out) {
      return new StreamObserver<>() {
        private int n;
        private int size;

        @Override
        public void onNext(Chunk c) {
          n++;
          size += c.getData().size();
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onNext(Count.newBuilder().setN(n).setSize(size).build());
          out.onCompleted();
        }
      };
    }

    @Override
    public StreamObserver<Chunk> bidiEcho(StreamObserver<Chunk> out) {
      return new StreamObserver<>() {
        @Override
        public void onNext(Chunk c) {
          out.onNext(c);
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onCompleted();
        }
      };
    }
  }

  static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? fallback : v;
  }

  public static void main(String[] args) throws Exception {
    int workers = Math.max(1, Integer.parseInt(env("WORKERS", "1")));
    String host = env("HOST", "127.0.0.1");
    NioEventLoopGroup boss = new NioEventLoopGroup(1);
    NioEventLoopGroup loops = new NioEventLoopGroup(workers);
    List<NettyServerBuilder> builders = new ArrayList<>();
    builders.add(
        NettyServerBuilder.forAddress(
            new InetSocketAddress(host, Integer.parseInt(env("PORT", "8080")))));
    String tlsPort = env("TLS_PORT", "");
    if (!tlsPort.isEmpty()) {
      File cert = new File(env("TLS_CERT", "cert.pem"));
      File key = new File(env("TLS_KEY", "key.pem"));
      builders.add(
          NettyServerBuilder.forAddress(new InetSocketAddress(host, Integer.parseInt(tlsPort)))
              .sslContext(GrpcSslContexts.forServer(cert, key).build()));
    }
    List<Server> servers = new ArrayList<>();
    for (NettyServerBuilder b : builders) {
      servers.add(
          b.bossEventLoopGroup(boss)
              .workerEventLoopGroup(loops)
              .channelType(NioServerSocketChannel.class)
              .directExecutor()
              .addService(new Bench())
              .build()
              .start());
    }
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> servers.forEach(Server::shutdownNow)));
    for (Server s : servers) {
      s.awaitTermination();
    }
  }
}

package serverbench.server;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.quarkus.grpc.GlobalInterceptor;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.TimeUnit;

/**
 * The call's deadline, which Quarkus' Vert.x-based gRPC server does not enforce: Vert.x 4.5's
 * gRPC service bridge (GrpcServiceBridgeImpl, which Quarkus binds every service with) reads
 * grpc-timeout nowhere, so a call outlives its deadline. This interceptor, a Quarkus global
 * interceptor, does what grpc-java's own server does: when the client's grpc-timeout passes
 * first, it closes the call with 4 DEADLINE_EXCEEDED and cancels the handler's work.
 */
@GlobalInterceptor
@ApplicationScoped
public class Deadlines implements ServerInterceptor {
  static final Metadata.Key<String> TIMEOUT =
      Metadata.Key.of("grpc-timeout", Metadata.ASCII_STRING_MARSHALLER);

  /** grpc-timeout (1 to 8 digits and a unit, gRPC over HTTP/2) in milliseconds, or -1. */
  static long millis(String v) {
    if (v == null || v.length() < 2 || v.length() > 9) {
      return -1;
    }
    long n;
    try {
      n = Long.parseLong(v.substring(0, v.length() - 1));
    } catch (NumberFormatException e) {
      return -1;
    }
    TimeUnit unit =
        switch (v.charAt(v.length() - 1)) {
          case 'H' -> TimeUnit.HOURS;
          case 'M' -> TimeUnit.MINUTES;
          case 'S' -> TimeUnit.SECONDS;
          case 'm' -> TimeUnit.MILLISECONDS;
          case 'u' -> TimeUnit.MICROSECONDS;
          case 'n' -> TimeUnit.NANOSECONDS;
          default -> null;
        };
    return unit == null ? -1 : Math.max(1, unit.toMillis(n));
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    long ms = millis(headers.get(TIMEOUT));
    Context vertx = Vertx.currentContext();
    if (ms < 0 || vertx == null) {
      return next.startCall(call, headers);
    }
    Guarded<Q, R> guarded = new Guarded<>(call, vertx.owner());
    ServerCall.Listener<Q> listener = next.startCall(guarded, headers);
    guarded.timer =
        vertx
            .owner()
            .setTimer(
                ms,
                id -> {
                  if (guarded.close(Status.DEADLINE_EXCEEDED.withDescription("deadline passed"))) {
                    listener.onCancel();
                  }
                });
    return listener;
  }

  /** The call, closed once: by its handler, or by its deadline (which the handler then sees). */
  static final class Guarded<Q, R> extends SimpleForwardingServerCall<Q, R> {
    private final Vertx vertx;
    long timer = -1;
    private boolean closed;

    Guarded(ServerCall<Q, R> call, Vertx vertx) {
      super(call);
      this.vertx = vertx;
    }

    boolean close(Status status) {
      if (closed) {
        return false;
      }
      closed = true;
      super.close(status, new Metadata());
      return true;
    }

    @Override
    public void sendMessage(R message) {
      if (!closed) {
        super.sendMessage(message);
      }
    }

    @Override
    public void close(Status status, Metadata trailers) {
      if (!closed) {
        closed = true;
        if (timer >= 0) {
          vertx.cancelTimer(timer);
        }
        super.close(status, trailers);
      }
    }
  }
}

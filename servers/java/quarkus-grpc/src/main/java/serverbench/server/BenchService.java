package serverbench.server;

import com.google.protobuf.ByteString;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.Arrays;
import serverbench.Bench;
import serverbench.Serverbench.Chunk;
import serverbench.Serverbench.Count;
import serverbench.Serverbench.Payload;
import serverbench.Serverbench.SumReply;
import serverbench.Serverbench.SumRequest;

/**
 * java/quarkus-grpc: the serverbench.Bench service (spec/serverbench.proto) as Quarkus' gRPC
 * extension has it written: the Mutiny interface its code generation makes from the proto,
 * every method returning a Uni or a Multi, so each call runs on its connection's event loop.
 */
@GrpcService
public class BenchService implements Bench {
  static Chunk chunk(int i, int size) {
    byte[] data = new byte[Math.max(size, 0)];
    Arrays.fill(data, (byte) i);
    return Chunk.newBuilder().setSeq(i).setData(ByteString.copyFrom(data)).build();
  }

  @Override
  public Uni<SumReply> sum(SumRequest req) {
    return Uni.createFrom().item(SumReply.newBuilder().setResult(req.getA() + req.getB()).build());
  }

  @Override
  public Uni<Payload> echo(Payload req) {
    return Uni.createFrom().item(req);
  }

  /**
   * n chunks; with delay_ms, one per tick of a timer (the slow call), which stops when the call
   * is cancelled (its deadline passed or the client reset it).
   */
  @Override
  public Multi<Chunk> serverStream(Count req) {
    int n = Math.max(req.getN(), 0);
    if (req.getDelayMs() <= 0) {
      return Multi.createFrom().range(0, n).map(i -> chunk(i, req.getSize()));
    }
    Duration delay = Duration.ofMillis(req.getDelayMs());
    return Multi.createFrom()
        .ticks()
        .startingAfter(delay)
        .every(delay)
        .select()
        .first(n)
        .map(i -> chunk(i.intValue(), req.getSize()));
  }

  /** Each chunk back as it arrives; the call ends when the client's side ends. */
  @Override
  public Multi<Chunk> bidiEcho(Multi<Chunk> in) {
    return in;
  }

  /** The number of chunks and their data bytes, answered once the client's side has ended. */
  @Override
  public Uni<Count> clientStream(Multi<Chunk> in) {
    return in.collect()
        .in(() -> new int[2], (acc, c) -> {
          acc[0]++;
          acc[1] += c.getData().size();
        })
        .map(acc -> Count.newBuilder().setN(acc[0]).setSize(acc[1]).build());
  }
}

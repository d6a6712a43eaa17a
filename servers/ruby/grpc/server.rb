# frozen_string_literal: true

# ruby/grpc: the serverbench.Bench service (spec/serverbench.proto) on the grpc gem (Debian's
# ruby-grpc, gRPC's C core underneath), h2c on PORT and, when TLS_PORT is set, TLS with ALPN h2
# there. WORKERS processes, forked before the gem is loaded, each with its own GRPC::RpcServer on
# the same ports (SO_REUSEPORT, on by default in gRPC's core).

# The concurrent calls the contract checks on one connection (100) each take a pool thread:
# RpcServer refuses a call with RESOURCE_EXHAUSTED when no thread is free.
POOL_SIZE = 128

def serve
  require 'grpc'
  require 'serverbench_services_pb'

  bench = Class.new(Serverbench::Bench::Service) do
    def sum(req, _call)
      Serverbench::SumReply.new(result: req.a + req.b)
    end

    def echo(req, _call)
      req
    end

    # With delay_ms (the contract's slow call) each chunk waits; when the call's deadline passes
    # first, gRPC's core ends the call with DEADLINE_EXCEEDED and the enumerator stops.
    def server_stream(req, call)
      delay = req.delay_ms / 1000.0
      Enumerator.new do |out|
        req.n.times do |i|
          if delay.positive?
            sleep([delay, call.deadline - Time.now].min.clamp(0, delay))
            break if call.cancelled? || Time.now >= call.deadline
          end
          out << Serverbench::Chunk.new(seq: i, data: (i & 0xff).chr * req.size)
        end
      end
    end

    # each_remote_read ends when the client ends its side; the one reply follows.
    def client_stream(call)
      n = 0
      size = 0
      call.each_remote_read do |chunk|
        n += 1
        size += chunk.data.bytesize
      end
      Serverbench::Count.new(n: n, size: size)
    end

    def bidi_echo(chunks, _call)
      chunks.each
    end
  end

  host = ENV.fetch('HOST', '127.0.0.1')
  server = GRPC::RpcServer.new(pool_size: POOL_SIZE)
  server.add_http2_port("#{host}:#{ENV.fetch('PORT', '8080')}", :this_port_is_insecure)
  tls_port = ENV.fetch('TLS_PORT', '')
  unless tls_port.empty?
    pair = { private_key: File.read(ENV.fetch('TLS_KEY')), cert_chain: File.read(ENV.fetch('TLS_CERT')) }
    creds = GRPC::Core::ServerCredentials.new(nil, [pair], false)
    server.add_http2_port("#{host}:#{tls_port}", creds)
  end
  server.handle(bench)
  server.run_till_terminated_or_interrupted(%w[TERM INT])
end

workers = [ENV.fetch('WORKERS', '1').to_i, 1].max
if workers == 1
  serve
else
  pids = Array.new(workers) { fork { serve } }
  %w[TERM INT].each do |sig|
    Signal.trap(sig) { pids.each { |pid| Process.kill('TERM', pid) rescue nil } }
  end
  pids.each { |pid| Process.wait(pid) }
end

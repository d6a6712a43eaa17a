// cpp/grpc: the serverbench.Bench service (spec/serverbench.proto) on gRPC C++'s synchronous
// API (Debian's libgrpc++), h2c on PORT and, when TLS_PORT is set, TLS with ALPN h2 there.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "serverbench.grpc.pb.h"

using grpc::ServerContext;
using grpc::Status;

namespace {

class Bench final : public serverbench::Bench::Service {
  Status Sum(ServerContext*, const serverbench::SumRequest* req,
             serverbench::SumReply* reply) override {
    reply->set_result(req->a() + req->b());
    return Status::OK;
  }

  Status Echo(ServerContext*, const serverbench::Payload* req,
              serverbench::Payload* reply) override {
    *reply = *req;
    return Status::OK;
  }

  // With delay_ms (the contract's slow call) the handler sleeps until the next chunk or the
  // call's deadline, whichever comes first; at the deadline gRPC's core has already ended the
  // call with DEADLINE_EXCEEDED, and the handler returns.
  Status ServerStream(ServerContext* ctx, const serverbench::Count* req,
                      grpc::ServerWriter<serverbench::Chunk>* writer) override {
    const auto delay = std::chrono::milliseconds(req->delay_ms());
    serverbench::Chunk chunk;
    for (int i = 0; i < req->n(); ++i) {
      if (req->delay_ms() > 0) {
        const auto next = std::chrono::system_clock::now() + delay;
        std::this_thread::sleep_until(std::min(next, ctx->deadline()));
        if (ctx->IsCancelled() || std::chrono::system_clock::now() < next) {
          return Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline exceeded");
        }
      }
      chunk.set_seq(i);
      chunk.set_data(std::string(static_cast<size_t>(std::max(req->size(), 0)),
                                 static_cast<char>(i & 0xff)));
      if (!writer->Write(chunk)) break;
    }
    return Status::OK;
  }

  // Reads every chunk until the client ends its side (Read returns false), then answers once.
  Status ClientStream(ServerContext*, grpc::ServerReader<serverbench::Chunk>* reader,
                      serverbench::Count* reply) override {
    serverbench::Chunk chunk;
    int32_t n = 0;
    int32_t size = 0;
    while (reader->Read(&chunk)) {
      ++n;
      size += static_cast<int32_t>(chunk.data().size());
    }
    reply->set_n(n);
    reply->set_size(size);
    return Status::OK;
  }

  Status BidiEcho(ServerContext*,
                  grpc::ServerReaderWriter<serverbench::Chunk, serverbench::Chunk>* stream) override {
    serverbench::Chunk chunk;
    while (stream->Read(&chunk)) {
      if (!stream->Write(chunk)) break;
    }
    return Status::OK;
  }
};

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : fallback;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main() {
  // SIGTERM is waited for by the main thread (blocked before gRPC starts its threads).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const int workers = std::max(1, std::atoi(env("WORKERS", "1").c_str()));
  const std::string host = env("HOST", "127.0.0.1");
  Bench service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(host + ":" + env("PORT", "8080"), grpc::InsecureServerCredentials());
  const std::string tls_port = env("TLS_PORT", "");
  if (!tls_port.empty()) {
    grpc::SslServerCredentialsOptions tls;
    tls.pem_key_cert_pairs.push_back({slurp(env("TLS_KEY", "")), slurp(env("TLS_CERT", ""))});
    builder.AddListeningPort(host + ":" + tls_port, grpc::SslServerCredentials(tls));
  }
  builder.RegisterService(&service);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, workers);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::cerr << "cpp/grpc: could not start on " << host << std::endl;
    return 1;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  server->Shutdown(std::chrono::system_clock::now());
  return 0;
}

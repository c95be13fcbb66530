// A tiny scripted OpenAI-compatible server for tests, on raw sockets so it can also misbehave:
// answer slowly, return HTTP 500, drop the connection, or send malformed JSON. It binds 127.0.0.1 on
// a free port and serves until destroyed. The script maps a marker found in the request body (e.g.
// "[item-3]") to a behaviour; a responder (second map) computes the behaviour from the request body
// instead (e.g. a paraphrase of the prompt it was sent).
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace trex::testing {

struct ScriptedReply {
  enum Kind { Content, Http500, Drop, Slow, MalformedJson, NullContent } kind = Content;
  std::string content;
  double delay_s = 0.0;
};
using ScriptedResponder = std::function<ScriptedReply(const std::string& body)>;

class ScriptedServer {
 public:
  // script: marker -> reply; requests matching no marker get HTTP 404.
  // responders: marker -> function of the request body giving the reply.
  explicit ScriptedServer(std::map<std::string, ScriptedReply> script, std::map<std::string, ScriptedResponder> responders = {})
      : script_(std::move(script)), responders_(std::move(responders)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 64);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    thread_.join();
    for (auto& t : workers_) t.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int requests(const std::string& marker) {
    std::lock_guard<std::mutex> l(mu_);
    return counts_[marker];
  }
  int total_requests() {
    std::lock_guard<std::mutex> l(mu_);
    int n = 0;
    for (auto& [k, v] : counts_) n += v;
    return n;
  }
  std::string last_authorization() {
    std::lock_guard<std::mutex> l(mu_);
    return last_auth_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::lock_guard<std::mutex> l(mu_);
      workers_.emplace_back([this, c] { handle(c); });
    }
  }

  static bool read_request(int c, std::string& headers, std::string& body) {
    std::string buf;
    char tmp[8192];
    std::size_t header_end = std::string::npos;
    while (header_end == std::string::npos) {
      ssize_t n = ::recv(c, tmp, sizeof tmp, 0);
      if (n <= 0) return false;
      buf.append(tmp, std::size_t(n));
      header_end = buf.find("\r\n\r\n");
    }
    headers = buf.substr(0, header_end);
    std::size_t len = 0;
    std::string lower = headers;
    for (auto& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    auto p = lower.find("content-length:");
    if (p != std::string::npos) len = std::stoul(lower.substr(p + 15));
    body = buf.substr(header_end + 4);
    while (body.size() < len) {
      ssize_t n = ::recv(c, tmp, sizeof tmp, 0);
      if (n <= 0) return false;
      body.append(tmp, std::size_t(n));
    }
    return true;
  }

  static void send_all(int c, const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(c, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += std::size_t(n);
    }
  }

  static std::string http(int status, const std::string& body) {
    return "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Error") +
           "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
  }

  void handle(int c) {
    std::string headers, body;
    if (read_request(c, headers, body)) {
      ScriptedReply reply;
      ScriptedResponder responder;
      std::string marker;
      {
        std::lock_guard<std::mutex> l(mu_);
        for (auto& [m, r] : script_)
          if (body.find(m) != std::string::npos) {
            marker = m;
            reply = r;
          }
        for (auto& [m, f] : responders_)
          if (body.find(m) != std::string::npos) {
            marker = m;
            responder = f;
          }
        counts_[marker]++;
        auto p = headers.find("Authorization: ");
        if (p != std::string::npos) last_auth_ = headers.substr(p + 15, headers.find("\r\n", p) - p - 15);
      }
      if (responder) reply = responder(body);
      if (marker.empty()) {
        send_all(c, http(404, R"({"error":{"message":"unknown","type":"invalid_request_error"}})"));
      } else if (reply.kind == ScriptedReply::Http500) {
        send_all(c, http(500, R"({"error":{"message":"boom","type":"server_error"}})"));
      } else if (reply.kind == ScriptedReply::Drop) {
        // close without answering
      } else if (reply.kind == ScriptedReply::MalformedJson) {
        send_all(c, http(200, "{\"choices\": [ this is not json"));
      } else {
        if (reply.delay_s > 0) {
          auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(reply.delay_s);
          while (!stop_ && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        nlohmann::json msg = {{"role", "assistant"}};
        msg["content"] = reply.kind == ScriptedReply::NullContent ? nlohmann::json() : nlohmann::json(reply.content);
        nlohmann::json j = {{"id", "x"}, {"object", "chat.completion"},
                            {"choices", {{{"index", 0}, {"message", msg}, {"finish_reason", "stop"}}}}};
        send_all(c, http(200, j.dump()));
      }
    }
    ::close(c);
  }

  std::map<std::string, ScriptedReply> script_;
  std::map<std::string, ScriptedResponder> responders_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::map<std::string, int> counts_;
  std::string last_auth_;
};

}  // namespace trex::testing

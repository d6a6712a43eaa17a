# Puma settings that command-line flags cannot express (run.sh passes -C puma.rb; its flags win).
#
# max_fast_inline 0: Puma 5.6 serves up to 10 keep-alive requests of a connection in a row
# ("fast inline"), and after each one a thread waits up to 0.2 s (FAST_TRACK_KA_TIMEOUT,
# lib/puma/client.rb `reset`) for that connection's next request, even while other
# connections have requests waiting. 200 clients sending one request each were answered at
# 0.2 s per connection per thread (the last after 20 s with 2 threads), and under deep
# pipelining connections were closed after 10 answers with requests still in flight. With 0, a
# thread goes back to the queue as soon as other work waits; measured with 100 keep-alive
# connections on /hello: 10,580 req/s against 6,570 with the default (median of 4 laps each).
max_fast_inline 0

// REFERENCE ONLY: not buildable on this machine (no Dart SDK can be installed here; see
// server.toml's requires.unavailable). Written after the original experiment's Dart server
// (dart:io HttpServer, AOT-compiled) and the serverbench contract, untested.
import 'dart:convert';
import 'dart:io';
import 'dart:isolate';
import 'dart:typed_data';

String env(String name, String fallback) {
  final value = Platform.environment[name];
  return (value == null || value.isEmpty) ? fallback : value;
}

final Uint8List payload =
    Uint8List.fromList(List<int>.generate(1 << 20, (i) => 0x61 + i % 26));

void reply(HttpRequest req, int status, String type, List<int> body) {
  req.response
    ..statusCode = status
    ..headers.contentType = ContentType.parse(type)
    ..contentLength = body.length
    ..add(body)
    ..close();
}

Future<void> serve(List<Object> args) async {
  final host = args[0] as String;
  final port = args[1] as int;
  final server = await HttpServer.bind(host, port, shared: true);
  await for (final req in server) {
    switch (req.uri.path) {
      case '/hello':
        reply(req, 200, 'text/plain', utf8.encode('Hello World!'));
        break;
      case '/hey':
        reply(req, 200, 'text/plain', utf8.encode('Hey!'));
        break;
      case '/hell':
        reply(req, 200, 'text/plain', utf8.encode('Hell!'));
        break;
      case '/about':
        reply(req, 200, 'text/html',
            utf8.encode('<html><body>About page</body></html>'));
        break;
      case '/json':
        reply(req, 200, 'application/json',
            utf8.encode(jsonEncode({'message': 'Hello, World!'})));
        break;
      case '/payload':
        reply(req, 200, 'application/octet-stream', payload);
        break;
      default:
        reply(req, 404, 'text/plain', utf8.encode('Not Found'));
    }
  }
}

Future<void> main() async {
  final host = env('HOST', '127.0.0.1');
  final port = int.parse(env('PORT', '8080'));
  final workers = int.parse(env('WORKERS', '1'));
  ProcessSignal.sigterm.watch().listen((_) => exit(0));
  for (var i = 1; i < workers; i++) {
    await Isolate.spawn(serve, <Object>[host, port]);
  }
  print('dart/httpserver: http on $host:$port, $workers isolates');
  await serve(<Object>[host, port]);
}

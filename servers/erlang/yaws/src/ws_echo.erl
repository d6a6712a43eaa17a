%% The ws-echo callback for Yaws's WebSocket process (basic callback: one call per whole
%% message). Yaws answers pings with pongs itself, and closes with 1002 on an unmasked client
%% frame (close_if_unmasked, set in server:websocket/1).
-module(ws_echo).
-export([handle_message/1]).

handle_message({text, Message}) -> {reply, {text, Message}};
handle_message({binary, Message}) -> {reply, {binary, Message}};
%% The client's close: answered with its own code.
handle_message({close, Status, _Reason}) -> {close, Status}.

#!/bin/sh
# As the official image's: redis-server without a configuration file answers other containers
# (protected mode would refuse every address but loopback).
set -eu
if [ "$1" = redis-server ]; then
  shift
  exec runuser -u redis -- redis-server --protected-mode no "$@"
fi
exec "$@"

# frozen_string_literal: true

# The database workloads (/db, /queries, /fortunes, /updates) on Debian's ruby-pg (libpq):
# one connection per Puma thread, opened by the thread on its first database request (after
# the fork), its statements prepared once on that connection. Loaded only with DATABASE_URL.
require 'erb'
require 'json'
require 'pg'
require 'rack/utils'

class Database
  SELECT_WORLD = 'SELECT id, randomnumber FROM world WHERE id = $1'
  SELECT_FORTUNES = 'SELECT id, message FROM fortune'
  MAX_QUERIES = 500
  JSON_TYPE = 'application/json'
  HTML_TYPE = 'text/html; charset=utf-8'
  EXTRA = 'Additional fortune added at request time.'

  Fortune = Struct.new(:id, :message)

  # The page, ERB from Ruby's standard library; h() is ERB::Util.html_escape.
  class Page
    include ERB::Util

    TEMPLATE = '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>' \
               '<tr><th>id</th><th>message</th></tr>' \
               '<% fortunes.each do |f| %><tr><td><%= f.id %></td><td><%= h(f.message) %></td></tr><% end %>' \
               '</table></body></html>'
    ERB.new(TEMPLATE).def_method(self, 'render(fortunes)')
  end

  PATHS = %w[/db /queries /fortunes /updates].freeze

  def initialize(url)
    @url = url
    @page = Page.new
  end

  # [status, content type, body] for one of PATHS; a database error is a 500, and the
  # thread's connection is dropped (the next request opens a new one).
  def call(path, query_string)
    case path
    when '/db' then [200, JSON_TYPE, JSON.generate(world(conn, random_id))]
    when '/queries' then [200, JSON_TYPE, JSON.generate(worlds(conn, count(query_string)))]
    when '/updates' then [200, JSON_TYPE, JSON.generate(update(conn, count(query_string)))]
    else [200, HTML_TYPE, fortunes(conn)]
    end
  rescue PG::Error => e
    warn "ruby/puma: database error on #{path}: #{e.message.strip}"
    drop_conn
    [500, 'text/plain', 'database error']
  end

  # N from `queries`: missing, empty or not a number means 1; clamped to 1..500.
  def count(query_string)
    value = Rack::Utils.parse_query(query_string.to_s)['queries']
    n = Integer(value.to_s, 10, exception: false) || 1
    n.clamp(1, MAX_QUERIES)
  end

  private

  # This thread's connection and the names of the statements prepared on it.
  def conn
    Thread.current[:serverbench_pg] ||= begin
      c = PG.connect(@url)
      c.prepare('world', SELECT_WORLD)
      c.prepare('fortunes', SELECT_FORTUNES)
      { conn: c, prepared: {} }
    end
  end

  def drop_conn
    state = Thread.current[:serverbench_pg]
    Thread.current[:serverbench_pg] = nil
    state&.dig(:conn)&.close
  rescue PG::Error
    nil
  end

  def random_id
    rand(1..10_000)
  end

  def world(state, id)
    row = state[:conn].exec_prepared('world', [id]).first
    raise PG::Error, "no world row with id #{id}" unless row

    { id: row['id'].to_i, randomNumber: row['randomnumber'].to_i }
  end

  # N rows, one SELECT each, one after the other on the thread's connection.
  def worlds(state, n)
    Array.new(n) { world(state, random_id) }
  end

  # Reads N rows, gives each a new number and writes them back in one batched UPDATE, ids
  # sorted (concurrent requests lock rows in the same order) and distinct (a row drawn twice
  # gets one new number, shown twice).
  def update(state, n)
    rows = worlds(state, n)
    changes = rows.to_h { |r| [r[:id], random_id] }.sort
    rows.each { |r| r[:randomNumber] = changes.bsearch { |id, _| id >= r[:id] }[1] }
    name = prepare_update(state, changes.size)
    state[:conn].exec_prepared(name, changes.flatten)
    rows
  end

  # `UPDATE world SET randomnumber = v.r FROM (VALUES ($1::int, $2::int), ...) ...`, one
  # statement per row count, prepared on first use on this connection.
  def prepare_update(state, n)
    name = "update_#{n}"
    state[:prepared][name] ||= begin
      values = Array.new(n) { |i| "($#{2 * i + 1}::int, $#{2 * i + 2}::int)" }.join(', ')
      state[:conn].prepare(name, 'UPDATE world SET randomnumber = v.r FROM ' \
                                 "(VALUES #{values}) AS v(id, r) WHERE world.id = v.id")
      true
    end
    name
  end

  def fortunes(state)
    list = state[:conn].exec_prepared('fortunes').map do |row|
      Fortune.new(row['id'].to_i, row['message'].force_encoding(Encoding::UTF_8))
    end
    list << Fortune.new(0, EXTRA)
    # Byte order of the UTF-8 strings (String#<=> compares bytes).
    list.sort_by!(&:message)
    @page.render(list)
  end
end

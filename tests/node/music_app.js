// The music application of the seed documents (users, songs, comments, user_likes, song_data),
// written against helenus 0.6, the Node.js Thrift client for Cassandra, unchanged. Usage:
//   node music_app.js HOST:PORT
// Prints "music app: OK" and exits 0 when every step answered as Cassandra would.
'use strict';

// helenus 0.6 was written for Node < 7, which still had process.EventEmitter; nothing else of
// it needs an older Node.
process.EventEmitter = require('events');
const helenus = require('helenus');
const assert = require('assert');
const { promisify } = require('util');

const call = (obj, method, ...args) => promisify(obj[method].bind(obj))(...args);

const USER = '6fa459ea-ee8a-3ca4-894e-db77e160355e';
const OTHER = '886313e1-3b8a-5372-9b90-0c9aee199e5d';
const SONG = 'a3bb189e-8bf9-3888-9912-ace4e6543002';
const COMMENTS = ['c0a8b1a0-0000-1000-8000-00000000000a', 'c0a8b1a0-0000-1000-8000-00000000000b'];

async function main() {
  const host = process.argv[2] || '127.0.0.1:9160';
  const pool = new helenus.ConnectionPool({ hosts: [host], timeout: 5000 });
  pool.on('error', (e) => console.error('pool error:', e.name, e.message));
  await call(pool, 'connect');
  await call(pool, 'createKeyspace', 'music', { replication: 1 });
  const ks = await call(pool, 'use', 'music');

  // The seed's schema, as its cassandra-cli statements declare it.
  const indexed = (name, type) => ({ name, validation_class: type, index_type: 0 });
  await call(ks, 'createColumnFamily', 'users', {
    comparator_type: 'UTF8Type',
    columns: [indexed('user_name', 'UTF8Type'), { name: 'json_data', validation_class: 'UTF8Type' }],
  });
  await call(ks, 'createColumnFamily', 'songs', {
    comparator_type: 'UTF8Type',
    columns: [indexed('user_name', 'UTF8Type'), { name: 'json_data', validation_class: 'UTF8Type' }],
  });
  await call(ks, 'createColumnFamily', 'comments', {
    comparator_type: 'UTF8Type',
    columns: [
      indexed('user', 'UUIDType'),
      indexed('song', 'UUIDType'),
      { name: 'timestamp', validation_class: 'DateType' },
      { name: 'comment', validation_class: 'UTF8Type' },
    ],
  });
  await call(ks, 'createColumnFamily', 'user_likes', { comparator_type: 'UUIDType', default_validation_class: 'IntegerType' });
  await call(ks, 'createColumnFamily', 'song_data', { comparator_type: 'UTF8Type', default_validation_class: 'CounterColumnType' });

  const users = await call(ks, 'get', 'users');
  const songs = await call(ks, 'get', 'songs');
  const comments = await call(ks, 'get', 'comments');
  const likes = await call(ks, 'get', 'user_likes');
  const songData = await call(ks, 'get', 'song_data');

  await call(users, 'insert', USER, { user_name: 'jsmith', json_data: '{"city":"Austin"}' });
  await call(users, 'insert', OTHER, { user_name: 'mjones', json_data: '{}' });
  await call(songs, 'insert', SONG, { user_name: 'jsmith', json_data: '{"title":"Blue"}' });

  // A user by name, through the KEYS index.
  const byName = await call(users, 'getIndexed', { fields: [{ column: 'user_name', operator: 'EQ', value: 'mjones' }] });
  assert.deepStrictEqual(byName.map((r) => r.key.toString()), [OTHER]);

  // Comments, each keyed by its own UUID, found by song.
  const at = new Date('2011-05-01T10:00:00Z');
  for (const [i, id] of COMMENTS.entries()) {
    await call(comments, 'insert', id, {
      user: new helenus.UUID(i === 0 ? USER : OTHER),
      song: new helenus.UUID(SONG),
      timestamp: at,
      comment: `comment ${i}`,
    });
  }
  const onSong = await call(comments, 'getIndexed', { fields: [{ column: 'song', operator: 'EQ', value: new helenus.UUID(SONG) }] });
  assert.deepStrictEqual(onSong.map((r) => r.key.toString()).sort(), COMMENTS);
  assert.strictEqual(onSong[0].get('timestamp').value.getTime(), at.getTime());

  // Likes: 2 = like, 1 = dislike, 3 = favourite; a change of mind removes the entry.
  await call(likes, 'insert', USER, { [SONG]: 2 }, {});
  const liked = await call(likes, 'get', USER, {});
  assert.strictEqual(liked.count, 1);
  assert.strictEqual(liked.get(SONG).value, 2);
  await call(likes, 'remove', USER, new helenus.UUID(SONG));
  assert.strictEqual((await call(likes, 'get', USER, {})).count, 0);

  // Totals per song in one counter row.
  await call(songData, 'incr', SONG, { likes: 1, views: 10 }, {});
  await call(songData, 'incr', SONG, { likes: 1, downloads: 1 }, {});
  // (No decrement: helenus-thrift's own i64 encoder cannot write a negative number; it fails
  // in the client before anything is sent.)
  const totals = await call(songData, 'get', SONG, {});
  assert.deepStrictEqual(
    { likes: totals.get('likes').value, views: totals.get('views').value, downloads: totals.get('downloads').value },
    { likes: 2, views: 10, downloads: 1 },
  );

  // Cassandra's errors come back as errors: a column family that does not exist.
  await assert.rejects(call(ks, 'get', 'playlists'));

  await call(pool, 'dropKeyspace', 'music');
  pool.close();
  console.log('music app: OK');
}

main().catch((e) => {
  console.error('music app failed:', e && (e.stack || e));
  process.exit(1);
});

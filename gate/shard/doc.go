// Package shard says which part of a dataset a run grades: ShardOf puts a
// case id in one of N shards, the same on every machine, and Shard is the
// K/N a run records.
package shard

package main

import "github.com/gradegate/gradegate/manifest/input"

// hostFS opens paths exactly as the user wrote them: relative to the working
// directory, absolute, or climbing with "..". os.DirFS would refuse the last
// two, and a manifest in evals/x may well point at ../shared/cases.jsonl.
// Messages then name files the way the user knows them. Every read of it goes
// through the input package, which refuses anything but a regular file.
type hostFS = input.Host

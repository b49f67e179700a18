# frozen_string_literal: true

# Reads a valgrind log and prints the error and leak records whose stacks pass through
# rperf.so; exits 1 when there is any. Ruby's own findings (it leaks by design at exit, and
# valgrind flags parts of its stack setup) are not ours to report.
records = []
current = []
ARGF.each_line do |line|
  body = line.sub(/\A==\d+== ?/, "")
  if body.strip.empty?
    records << current unless current.empty?
    current = []
  else
    current << body
  end
end
records << current unless current.empty?
# A finding is ours when the first frame that is not an allocator runs in rperf.so: the bad
# access happened in our code, or the leaked block was allocated by it.
ALLOCATOR = /vgpreload|malloc|calloc|realloc|operator new|objspace_x|ruby_x|libstdc\+\+/
ours = records.select do |r|
  next false unless r.first.match?(/Invalid|uninitialised|definitely lost|Mismatched|overlap|free/)

  frame = r.drop(1).find { |l| l.match?(/\A\s+(at|by) /) && !l.match?(ALLOCATOR) }
  frame&.include?("rperf.so")
end
ours.each { |r| puts r.join, "" }
puts "valgrind: #{ours.size} findings in rperf.so"
exit(ours.empty? ? 0 : 1)

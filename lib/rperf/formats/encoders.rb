# frozen_string_literal: true

module Rperf
  # rperf 0.11's encoder modules, as thin names over the native encoders (ext/rperf/io): each
  # takes a result Hash (from stop, snapshot, load, or built by hand) and returns a String.

  # The text report: " Flat:" and " Cumulative:" tables of the top functions.
  module Text
    module_function

    def encode(data, top_n: 50, header: true)
      Storage.native(data).encode(:text, { top: top_n, header: header }).force_encoding(Encoding::UTF_8)
    end
  end

  # Collapsed stacks ("root;...;leaf weight" lines) for FlameGraph and speedscope.
  # allocations: true: estimated objects allocated per stack, the class as the leaf frame (a
  # profile recorded with allocations: N).
  module Collapsed
    module_function

    def encode(data, allocations: false)
      return Storage.encode(data, :collapsed) unless allocations

      Storage.native(data).encode(:collapsed, { allocations: true }).force_encoding(Encoding::UTF_8)
    end
  end

  # The pprof protobuf, not gzipped (Rperf.save gzips it).
  module PProf
    module_function

    def encode(data)
      profile = Storage.native(data)
      profile.encode(:pprof, { comments: Storage.pprof_comments(profile) }).force_encoding(Encoding::BINARY)
    end
  end

  # gzip of a String (binary), as rperf 0.11's Rperf.gzip.
  def self.gzip(data)
    Zlib.gzip(data.to_s).force_encoding(Encoding::BINARY)
  end
end

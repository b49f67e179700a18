# frozen_string_literal: true

require "json"

module CompatProbe
  # Describes a value's shape for comparison between two gems: Hash keys are shown with
  # #inspect (so :"%GVL" and "%GVL" differ), Arrays by their size and their first element,
  # scalars by class (and the value itself for Symbols, booleans and short Strings when
  # `values:` is true).
  module Shape
    module_function

    def of(value, values: false, depth: 6)
      return "…" if depth.zero?

      case value
      when Hash then value.to_h { |k, v| [k.inspect, of(v, values: values, depth: depth - 1)] }
      when Array
        value.empty? ? "Array(0)" : { "Array(#{value.size})" => of(value.first, values: values, depth: depth - 1) }
      when Symbol then values ? value.inspect : "Symbol"
      when true, false, nil then value.inspect
      when String then values && value.size <= 40 ? value.inspect : "String"
      else value.class.name
      end
    end

    # Shapes of every distinct element of an Array (e.g. the entries of label_sets).
    def each_of(array, values: true) = array.map { |v| of(v, values: values) }.uniq

    def error_of
      yield
      "no error"
    rescue Exception => e # a probe reports any failure as a fact
      "#{e.class}: #{e.message.lines.first&.strip}"
    end

    # Method#parameters as a short signature: "(path, data, format:)", "(**kw, &block)".
    def signature(params)
      parts = params.map do |kind, name|
        { req: name.to_s, opt: "#{name} = …", rest: "*#{name}", key: "#{name}:", keyreq: "#{name}: (required)",
          keyrest: "**#{name}", block: "&#{name}" }.fetch(kind, "#{kind} #{name}")
      end
      "(#{parts.join(", ")})"
    end

    def emit(facts) = puts(JSON.pretty_generate(facts))
  end
end

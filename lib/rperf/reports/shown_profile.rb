# frozen_string_literal: true

module Rperf
  # What the CLI's views (`rperf report`, `stat`, `diff`) show of a profile: its idle waits left
  # out unless asked for (which samples are idle is the model's rule, profile/idle_wait.hh), and
  # only the threads asked for. The model selects the samples (Native::Profile#selected:
  # profile/sample_filter.hh); this only names them.
  class ShownProfile
    IDLE_FLAG = "--idle"

    # The profile shown (a Native::Profile) and the idle time left out of it (ns).
    attr_reader :profile, :hidden_idle_ns

    # data: a result Hash or a Native::Profile; idle: show the idle waits; threads: thread_seqs
    # (nil: all); app_first: each run of gem and stdlib frames one [framework] frame (the model's
    # "app" transform, the Viewer's "app code first").
    def initialize(data, idle: false, threads: nil, app_first: false)
      native = Storage.native(data)
      totals = native.thread_totals # [[thread_seq, total_ns, idle_ns, name], ...]
      select = {}
      if threads
        known = totals.map(&:first)
        missing = threads - known
        unless missing.empty?
          listed = totals.map { |seq, _, _, name| name ? "#{seq} (#{name})" : seq.to_s }
          raise Error, "no thread #{missing.join(', ')} in the profile (its threads: #{listed.empty? ? 'none' : listed.join(', ')})"
        end

        totals = totals.select { |seq, *| threads.include?(seq) }
        select[:hide] = known - threads unless (known - threads).empty?
      end
      @hidden_idle_ns = idle ? 0 : totals.sum { |_, _, idle_ns| idle_ns }
      select[:idle] = true if @hidden_idle_ns.positive?
      @profile = select.empty? ? native : native.selected(select)
      @profile = @profile.transformed([["app"]]) if app_first
    end

    # The one line saying what was left out ("(1,234.5 ms of idle waits hidden: --idle to show)"),
    # or nil when nothing was.
    def note = ShownProfile.note(@hidden_idle_ns)

    def self.note(hidden_ns)
      "(#{Stat.ms(hidden_ns)} ms of idle waits hidden: #{IDLE_FLAG} to show)" if hidden_ns.positive?
    end

    # diff's: both profiles' hidden times.
    def self.diff_note(base, target)
      return nil unless base.hidden_idle_ns.positive? || target.hidden_idle_ns.positive?

      "(idle waits hidden: #{Stat.ms(base.hidden_idle_ns)} ms in base, #{Stat.ms(target.hidden_idle_ns)} ms in target: #{IDLE_FLAG} to show)"
    end

    # --thread's value: a thread's number (thread_seq, as the Viewer's Threads tab shows it).
    def self.thread_number(text)
      Integer(text, 10).tap { |n| raise ArgumentError if n.negative? }
    rescue ArgumentError
      raise Error, "--thread must be a thread's number (as the Viewer's Threads tab shows it), got #{text.inspect}"
    end
  end
end

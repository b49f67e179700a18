# frozen_string_literal: true

# Issue 48.6(a)'s cause, without rperf and without Puma: Puma's SIGTERM trap writes its stop
# command to a pipe (Server#notify_safely) that the server thread closes when it stops. When the
# close finds the trap's write still registered on the fd (written, the GVL not yet taken back),
# Ruby (3.3.8 and 3.4.5 here) never wakes the closing thread: it sleeps in IO#close forever, and
# the trap's Thread#join on it too. The trap sees the close as IOError "stream closed in another
# thread", once per hang. (Ruby's thread_io_wake_pending_closer locks the close's wake-up mutex,
# which is not allow_trap, so in a trap handler the lock raises before the closer is woken; the
# pending IOError then takes the ThreadError's place.) A write from a plain thread (TRAP=0) never
# hangs.
#   ruby test/stress/trap_write_close.rb [ROUNDS]      prints one line; exits 1 when one hung
rounds = Integer(ARGV[0] || 300)
use_trap = ENV["TRAP"] != "0"
hangs = 0
errors = Hash.new(0)
rounds.times do
  r, w = IO.pipe
  closer = Thread.new do
    IO.select([r]) # the server thread waits for the command
    r.close
    w.close
  end
  write = lambda do
    w << "!"
  rescue IOError => e
    errors[e.message] += 1
  end
  if use_trap
    Signal.trap("USR1") { write.call }
    Process.kill("USR1", Process.pid)
  else
    Thread.new { write.call }.join
  end
  next if closer.join(2)

  hangs += 1
  closer.kill
end
puts "#{RUBY_DESCRIPTION}: #{use_trap ? 'a trap' : 'a thread'} writes while another thread closes: #{rounds} rounds, " \
     "#{hangs} closes hung; the writer's IOErrors: #{errors.empty? ? 'none' : errors}"
exit(hangs.zero? ? 0 : 1)

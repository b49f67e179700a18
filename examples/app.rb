# frozen_string_literal: true

# A small program with a known shape, used by `script/run`: CPU work in two methods with a
# 1:3 cost ratio, some allocation (GC), a sleeping thread and a thread contending for the GVL.
class Inventory
  def initialize(size) = @items = Array.new(size) { |i| { id: i, price: (i * 37) % 101 } }
  def total_price = @items.sum { |item| item[:price] }
  def expensive_items = @items.select { |item| item[:price] > 50 }.map { |item| item[:id].to_s }
end

def checksum(n) = n.times.reduce(0) { |acc, i| (acc * 31 + i) & 0xffff_ffff }
def light_work = checksum(200_000)
def heavy_work = checksum(600_000)

def main
  inventory = Inventory.new(20_000)
  sleeper = Thread.new { sleep 0.15 }
  worker = Thread.new { 3.times { heavy_work } }
  5.times do
    light_work
    heavy_work
    inventory.total_price
    inventory.expensive_items
  end
  [sleeper, worker].each(&:join)
end

main if $PROGRAM_NAME == __FILE__

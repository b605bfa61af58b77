import tomlkit
t = tomlkit.table()
t.add('foo', 2)
t.add(tomlkit.key(['bar', 'baz']), 1)
t.add(tomlkit.key(['bar', 'qux']), 1)

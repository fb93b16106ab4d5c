// Test doubles that users may want too (the emulator, scripted models): public on purpose.
export {};

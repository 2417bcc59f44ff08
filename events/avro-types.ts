import avro from 'avsc';

/** timestamp-millis <-> Date, so events carry real dates in code and longs on the wire. */
export class TimestampMillisType extends avro.types.LogicalType {
  override _fromValue(value: unknown): Date {
    return new Date(value as number);
  }
  override _toValue(value: unknown): number | undefined {
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.getTime();
    return undefined;
  }
  override _resolve(type: avro.Type): ((value: unknown) => Date) | undefined {
    if (avro.Type.isType(type, 'long', 'logical:timestamp-millis')) return (v) => this._fromValue(v);
    return undefined;
  }
}

export const logicalTypes = { 'timestamp-millis': TimestampMillisType };

export function parseSchema(schema: avro.Schema): avro.Type {
  return avro.Type.forSchema(schema, { logicalTypes, wrapUnions: false });
}
